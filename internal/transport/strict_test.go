package transport

import (
	"net/http"
	"strings"
	"testing"
)

// TestHTTPStrictMessages: over HTTP, an id that is not a string or an
// integer and an object with names differing only by case (envelope,
// params, _meta, arguments at any depth) are refused with 400 and a
// JSON-RPC -32600 that says what was wrong, before any session work; a
// clean message on the same session still runs.
func TestHTTPStrictMessages(t *testing.T) {
	f := startHTTP(t, nil)
	sid := f.initialize()
	tests := []struct{ name, body, want string }{
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"id\" must be a string or an integer, got 1.5`},
		{"huge exponent id", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `"id":null,"error":{"code":-32600,`},
		{"capital exponent id", `{"jsonrpc":"2.0","id":1E400,"method":"ping"}`, `"id":null,"error":{"code":-32600,`},
		{"negative zero fraction id", `{"jsonrpc":"2.0","id":-0.0,"method":"ping"}`, `"id":null,"error":{"code":-32600,`},
		{"integral fraction id", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, `"id":null,"error":{"code":-32600,`},
		{"case variant in the envelope", `{"jsonrpc":"2.0","id":5,"method":"ping","METHOD":"tools/call"}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: member names \"method\" and \"METHOD\" at the top level`},
		{"case variant of the tool name", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","Name":"block"}}`,
			`{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"invalid request: member names \"name\" and \"Name\" in \"/params\"`},
		{"case variant of an argument", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"path":"a","Path":"/etc/passwd"}}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request: member names \"path\" and \"Path\" in \"/params/arguments\"`},
		{"case variant deep in arguments", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"a":[[{"k":1,"K":2}]]}}}`,
			`"id":8,"error":{"code":-32600,"message":"invalid request: member names \"k\" and \"K\" in \"/params/arguments/a/0/0\"`},
		{"case variant in _meta", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"a","progresstoken":"b"}}}`,
			`"id":9,"error":{"code":-32600,"message":"invalid request: member names \"progressToken\" and \"progresstoken\" in \"/params/_meta\"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(req{body: tt.body, headers: map[string]string{HeaderSessionID: sid}})
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tt.want) {
				t.Errorf("HTTP %d %s\nwant 400 with %s", resp.StatusCode, body, tt.want)
			}
		})
	}
	resp, body := f.do(req{body: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call","params":{"name":"echo","arguments":{"path":"a","x":{"path":"b"}}}}`,
		headers: map[string]string{HeaderSessionID: sid}})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), `{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":`) ||
		!strings.Contains(string(body), `"isError":false`) {
		t.Errorf("a clean call after the refusals: HTTP %d %s", resp.StatusCode, body)
	}
}
