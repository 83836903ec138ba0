package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/chain"
)

// strictCases are raw lines that must be refused before any tool runs: ids
// that are not strings or integers, and objects with names that differ only
// by case, at every level a client writes (envelope, params, _meta,
// arguments at any depth). want is what the answer must contain.
var strictCases = []struct {
	name, line, want string
}{
	{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"id\" must be a string or an integer, got 1.5`},
	{"huge exponent id", `{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"id\" must be a string or an integer, got 1e400`},
	{"capital exponent id", `{"jsonrpc":"2.0","id":1E400,"method":"ping"}`, `"id":null,"error":{"code":-32600,`},
	{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, `"id":null,"error":{"code":-32600,`},
	{"integral fraction id", `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, `"id":null,"error":{"code":-32600,`},
	{"negative zero fraction id", `{"jsonrpc":"2.0","id":-0.0,"method":"ping"}`, `"id":null,"error":{"code":-32600,`},
	{"case variant in the envelope", `{"jsonrpc":"2.0","id":31,"method":"ping","Method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":31,"error":{"code":-32600,"message":"invalid request: member names \"method\" and \"Method\" at the top level differ only by case`},
	{"case variant of the tool name", `{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"echo","Name":"block"}}`,
		`{"jsonrpc":"2.0","id":32,"error":{"code":-32600,"message":"invalid request: member names \"name\" and \"Name\" in \"/params\"`},
	{"case variant of an argument", `{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"echo","arguments":{"path":"a","Path":"/etc/passwd"}}}`,
		`{"jsonrpc":"2.0","id":33,"error":{"code":-32600,"message":"invalid request: member names \"path\" and \"Path\" in \"/params/arguments\"`},
	{"case variant deep in arguments", `{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"echo","arguments":{"opts":[{"env":{"HOME":"/a","home":"/b"}}]}}}`,
		`"id":34,"error":{"code":-32600,"message":"invalid request: member names \"HOME\" and \"home\" in \"/params/arguments/opts/0/env\"`},
	{"case variant in _meta", `{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1,"PROGRESSTOKEN":2}}}`,
		`"id":35,"error":{"code":-32600,"message":"invalid request: member names \"progressToken\" and \"PROGRESSTOKEN\" in \"/params/_meta\"`},
	{"case variant in initialize params", `{"jsonrpc":"2.0","id":36,"method":"initialize","params":{"protocolVersion":"2025-06-18","ProtocolVersion":"2024-11-05"}}`,
		`"id":36,"error":{"code":-32600,`},
	{"escaped duplicate of an argument", `{"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"echo","arguments":{"path":"a","\u0070ath":"b"}}}`,
		`"id":37,"error":{"code":-32600,"message":"invalid request: duplicate member name \"path\" in \"/params/arguments\"`},
}

// TestStrictWireStream sends each strict case on a stream session (the
// stdio and unix-socket path): it is refused, no tool runs, and the session
// goes on.
func TestStrictWireStream(t *testing.T) {
	for _, tt := range strictCases {
		t.Run(tt.name, func(t *testing.T) {
			tc := &testChain{}
			h := newHarness(t, testServer(tc))
			h.initialize("2025-06-18")
			h.send(tt.line)
			if got := h.recv(); !strings.Contains(got, tt.want) {
				t.Errorf("sent %s\ngot  %s\nwant %s", tt.line, got, tt.want)
			}
			h.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
			if got := h.recv(); got != `{"jsonrpc":"2.0","id":"after","result":{}}` {
				t.Errorf("the session did not go on: %s", got)
			}
			if o := tc.lastOutcome(); o.Result != "" {
				t.Errorf("a tool ran: %+v", o)
			}
		})
	}
}

// TestStrictWireHandle sends each strict case as an HTTP body (Session.Handle).
func TestStrictWireHandle(t *testing.T) {
	tc := &testChain{}
	srv := testServer(tc)
	s := srv.NewSession(&chain.Caller{Transport: "http", AuthMethod: "bearer", Subject: "ws"}, SessionOptions{})
	defer s.Close()
	ctx := context.Background()
	handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
	for _, tt := range strictCases {
		if got := string(handleBody(s, ctx, []byte(tt.line))); !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %s\nwant %s", tt.name, got, tt.want)
		}
	}
	if o := tc.lastOutcome(); o.Result != "" {
		t.Errorf("a tool ran: %+v", o)
	}
	// Integers, however long, and strings are ids; the echo tool runs.
	for _, id := range []string{`-0`, `123456789012345678901234567890`, `"1.5"`} {
		got := string(handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo","arguments":{"a":{"x":1},"b":{"x":2}}}}`)))
		if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":`+id+`,"result":`) || !strings.Contains(got, `"isError":false`) {
			t.Errorf("id %s: %s", id, got)
		}
	}
}

// TestInstructionsSayWhatHolds: the instructions a client shows the model
// must not claim bash is confined, and initialize sends them.
func TestInstructionsSayWhatHolds(t *testing.T) {
	text := Instructions("/home/u/proj")
	for _, w := range []string{
		"/home/u/proj",
		"refuse any path that leads outside it",
		"bash is not confined to the workspace",
		"can read and write anything that user can",
		"setsid",
		"can outlive the call",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("instructions do not say %q:\n%s", w, text)
		}
	}
	for _, bad := range []string{"nothing outside", "nothing outlives", "cannot be read or written"} {
		if strings.Contains(text, bad) {
			t.Errorf("instructions claim %q:\n%s", bad, text)
		}
	}
	srv := testServer(&testChain{})
	srv.Instructions = text
	h := newHarness(t, srv)
	r := decode(t, h.initialize("2025-06-18"))
	if !strings.Contains(string(r.Result), `"instructions":"clawd gives tools for the workspace /home/u/proj.`) {
		t.Errorf("initialize result lacks the instructions: %s", r.Result)
	}
}

// The -32005 a handler's os.Root raises mid-call carries the reason in
// its message, like the chain's own.
func TestHandlerSandboxViolationMessage(t *testing.T) {
	h := newHarness(t, testServer(&testChain{}))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"escape"}}`)
	r := decode(t, h.recv())
	if r.Error == nil || r.Error.Code != chain.CodeSandboxViolation ||
		r.Error.Message != `sandbox_violation: "link/x": symlink link points outside the workspace root; only paths inside the workspace can be used` ||
		r.Error.Data["path"] != "link/x" {
		t.Errorf("error = %+v", r.Error)
	}
}
