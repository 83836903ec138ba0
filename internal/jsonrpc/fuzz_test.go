package jsonrpc

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzParse checks that Parse never panics, and that whatever it returns
// can be answered with valid JSON that echoes the id exactly.
func FuzzParse(f *testing.F) {
	// More seeds live in testdata/fuzz/FuzzParse.
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"read_file","Name":"bash"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, perr := Parse(data)
		var resp []byte
		if perr != nil {
			if perr.Err == nil || perr.Err.Code >= -32000 || perr.Err.Message == "" {
				t.Fatalf("bad error for %q: %+v", data, perr.Err)
			}
			resp = AppendError(nil, perr.ID, perr.Err)
		} else {
			if !m.IsResponse && m.Method == "" {
				t.Fatalf("parsed %q without a method", data)
			}
			if !m.ID.IsZero() && !bytes.Contains(data, []byte(m.ID.Raw())) {
				t.Fatalf("id %s not taken verbatim from %q", m.ID.Raw(), data)
			}
			if m.Params != nil && m.Params.Kind() != '{' {
				t.Fatalf("params of kind %v accepted", m.Params.Kind())
			}
			resp = AppendResult(nil, m.ID, []byte(`{}`))
		}
		if !jsontext.Value(resp).IsValid() {
			t.Fatalf("response is not valid JSON: %s", resp)
		}
	})
}
