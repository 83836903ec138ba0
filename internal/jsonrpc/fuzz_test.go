package jsonrpc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzParse checks that Parse never panics, that it answers -32700 exactly
// for bytes that are not valid JSON, that whatever it returns can be
// answered with valid JSON that echoes the id exactly, that an accepted id
// is a string or an integer, and that the one-pass member-name check agrees
// with a slow reference (every pair of names of every object compared with
// strings.EqualFold).
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
			if raw := m.ID.Raw(); raw[0] != '"' && raw != "null" && strings.ContainsAny(raw, ".eE") {
				t.Fatalf("non-integer id %s accepted", raw)
			}
			if m.Params != nil && m.Params.Kind() != '{' {
				t.Fatalf("params of kind %v accepted", m.Params.Kind())
			}
			resp = AppendResult(nil, m.ID, []byte(`{}`))
		}
		if !jsontext.Value(resp).IsValid() {
			t.Fatalf("response is not valid JSON: %s", resp)
		}
		// -32700 (with a null id) exactly when the bytes are not one valid
		// JSON value.
		valid := jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true))
		if isParseErr := perr != nil && perr.Err.Code == CodeParseError; isParseErr == valid {
			t.Fatalf("Parse(%q): valid JSON %v, but error %+v", data, valid, perr)
		}
		if perr != nil && perr.Err.Code == CodeParseError && !perr.ID.IsZero() {
			t.Fatalf("Parse(%q): a parse error with id %s", data, perr.ID.Raw())
		}
		if valid {
			want := refCollision(t, data)
			got := CheckNames(data) != nil
			if got != want {
				t.Fatalf("CheckNames(%q) found a collision: %v, the reference: %v", data, got, want)
			}
		}
	})
}

// refCollision is the slow reference for CheckNames: it reads every token
// and compares each new member name with all earlier names of its object.
func refCollision(t *testing.T, data []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	type obj struct {
		names []string
		name  bool // the next string token is a name
	}
	var stack []*obj
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return false
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.name && tok.Kind() == '"' {
			n := tok.String()
			for _, prev := range top.names {
				if strings.EqualFold(prev, n) {
					return true
				}
			}
			top.names = append(top.names, n)
			top.name = false
			continue
		}
		if top != nil && top.name && tok.Kind() == '}' {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1] != nil {
				stack[len(stack)-1].name = true
			}
			continue
		}
		switch tok.Kind() {
		case '{':
			stack = append(stack, &obj{name: true})
		case '[':
			stack = append(stack, nil)
		case ']':
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1] != nil {
				stack[len(stack)-1].name = true
			}
		default:
			// A scalar value: in an object the next token is a name.
			if top != nil {
				top.name = true
			}
		}
		if len(stack) == 0 && tok.Kind() != '{' && tok.Kind() != '[' {
			return false
		}
	}
}
