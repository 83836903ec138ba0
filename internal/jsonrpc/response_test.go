package jsonrpc

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestParseResponse: a client (or a gateway reading an upstream server)
// gets a response's id, result and error from Parse, and a response of the
// wrong shape is refused with a reason.
func TestParseResponse(t *testing.T) {
	valid := []struct {
		name, in  string
		id        string
		result    string // "" : none
		code      int    // error code when an error response
		message   string
		data      string
		nullIDErr bool
	}{
		{name: "result object", in: `{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}`, id: "7", result: `{"a":[1,2]}`},
		{name: "result null is a result", in: `{"jsonrpc":"2.0","id":"x","result":null}`, id: `"x"`, result: `null`},
		{name: "result kept byte for byte", in: `{"jsonrpc":"2.0","id":1,"result":{"n": 1.50}}`, id: "1", result: `{"n": 1.50}`},
		{name: "error", in: `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: x"}}`, id: "2", code: -32601, message: "method not found: x"},
		{name: "error with data", in: `{"jsonrpc":"2.0","id":3,"error":{"code":-32005,"message":"sandbox_violation","data":{"path":"../x"}}}`, id: "3", code: -32005, message: "sandbox_violation", data: `{"path":"../x"}`},
		{name: "error with null id", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, id: "null", code: -32700, message: "parse error"},
		{name: "error members in any order", in: `{"error":{"message":"m","code":5},"id":4,"jsonrpc":"2.0"}`, id: "4", code: 5, message: "m"},
	}
	for _, tt := range valid {
		t.Run(tt.name, func(t *testing.T) {
			m, perr := Parse([]byte(tt.in))
			if perr != nil {
				t.Fatalf("Parse(%s): %v", tt.in, perr)
			}
			if !m.IsResponse || m.IsNotification() {
				t.Fatalf("IsResponse %v, IsNotification %v; want a response", m.IsResponse, m.IsNotification())
			}
			if got := m.ID.Raw(); got != tt.id {
				t.Errorf("id = %s, want %s", got, tt.id)
			}
			if got := string(m.Result); got != tt.result {
				t.Errorf("result = %q, want %q", got, tt.result)
			}
			if tt.code == 0 {
				if m.Error != nil {
					t.Errorf("error = %+v, want none", m.Error)
				}
				return
			}
			if m.Error == nil {
				t.Fatal("error = nil")
			}
			if m.Error.Code != tt.code || m.Error.Message != tt.message {
				t.Errorf("error = %d %q, want %d %q", m.Error.Code, m.Error.Message, tt.code, tt.message)
			}
			var data string
			if v, ok := m.Error.Data.(jsontext.Value); ok {
				data = string(v)
			} else if m.Error.Data != nil {
				t.Errorf("error data is %T, want jsontext.Value", m.Error.Data)
			}
			if data != tt.data {
				t.Errorf("error data = %q, want %q", data, tt.data)
			}
		})
	}

	invalid := []struct{ name, in, id, want string }{
		{name: "result and error", in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, id: "1", want: "exactly one of"},
		{name: "result and method", in: `{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, id: "1", want: "exactly one of"},
		{name: "missing id", in: `{"jsonrpc":"2.0","result":{}}`, id: "null", want: `must have an "id"`},
		{name: "missing id in an error response", in: `{"jsonrpc":"2.0","error":{"code":1,"message":"x"}}`, id: "null", want: `must have an "id"`},
		{name: "null id in a success response", in: `{"jsonrpc":"2.0","id":null,"result":{}}`, id: "null", want: "got null"},
		{name: "null id in a request", in: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, id: "null", want: "got null"},
		{name: "error not an object", in: `{"jsonrpc":"2.0","id":1,"error":"boom"}`, id: "1", want: `"error" must be an object`},
		{name: "error without code", in: `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, id: "1", want: `integer "code"`},
		{name: "error without message", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, id: "1", want: `string "message"`},
		{name: "error code not an integer", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, id: "1", want: `integer "code"`},
		{name: "error message not a string", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":7}}`, id: "1", want: `string "message"`},
		{name: "fractional id", in: `{"jsonrpc":"2.0","id":2.5,"result":{}}`, id: "null", want: "not an integer"},
		{name: "no version", in: `{"id":1,"result":{}}`, id: "1", want: `"jsonrpc" must be "2.0"`},
		{name: "case variant of result", in: `{"jsonrpc":"2.0","id":1,"Result":{}}`, id: "1", want: "only by case"},
		{name: "duplicate name inside the result", in: `{"jsonrpc":"2.0","id":1,"result":{"a":1,"A":2}}`, id: "1", want: "only by case"},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			m, perr := Parse([]byte(tt.in))
			if perr == nil {
				t.Fatalf("Parse(%s) = %+v, want an error", tt.in, m)
			}
			if perr.Err.Code != CodeInvalidRequest {
				t.Errorf("code = %d, want %d", perr.Err.Code, CodeInvalidRequest)
			}
			if got := perr.ID.Raw(); got != tt.id {
				t.Errorf("error id = %s, want %s", got, tt.id)
			}
			if !strings.Contains(perr.Err.Message, tt.want) {
				t.Errorf("message %q does not say %q", perr.Err.Message, tt.want)
			}
		})
	}
}

// TestParseNullIDKeepsFirstReason: a null id is still the reason given when
// it comes before another fault, as when it was refused on sight.
func TestParseNullIDKeepsFirstReason(t *testing.T) {
	_, perr := Parse([]byte(`{"jsonrpc":"2.0","id":null,"method":"x","params":[1]}`))
	if perr == nil || !strings.Contains(perr.Err.Message, "got null") {
		t.Errorf("got %v, want the null id named", perr)
	}
	_, perr = Parse([]byte(`{"jsonrpc":"2.0","params":[1],"id":null,"method":"x"}`))
	if perr == nil || !strings.Contains(perr.Err.Message, `"params" must be an object`) {
		t.Errorf("got %v, want the params named", perr)
	}
}

func TestParseBatch(t *testing.T) {
	b := ParseBatch([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}, {"jsonrpc":"2.0","id":2,"method":1}, {"jsonrpc":"2.0","id":3,"result":{}}]`))
	if b.Err != nil || len(b.Items) != 3 {
		t.Fatalf("batch = %+v", b)
	}
	if it := b.Items[0]; it.Err != nil || it.Msg.Method != "ping" || it.Msg.ID.Raw() != "1" {
		t.Errorf("item 0 = %+v", it)
	}
	if it := b.Items[1]; it.Err == nil || it.Err.ID.Raw() != "2" || it.Err.Err.Code != CodeInvalidRequest {
		t.Errorf("item 1 = %+v, want -32600 with id 2", it)
	}
	if it := b.Items[2]; it.Err != nil || !it.Msg.IsResponse {
		t.Errorf("item 2 = %+v, want a response", it)
	}
	for in, code := range map[string]int{`[`: CodeParseError, `[1,]`: CodeParseError, `[]`: CodeInvalidRequest, ` [ ] `: CodeInvalidRequest} {
		if b := ParseBatch([]byte(in)); b.Err == nil || b.Err.Code != code || b.Items != nil {
			t.Errorf("ParseBatch(%q) = %+v, want error %d", in, b, code)
		}
	}
	m, perr := ParseAny([]byte(` [{"jsonrpc":"2.0","method":"n"}]`))
	if perr != nil || m.Batch == nil || m.IsNotification() || m.IsResponse {
		t.Errorf("ParseAny(batch) = %+v, %v: want a batch that is neither a notification nor a response", m, perr)
	}
}
