package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

var callLineSeeds = []struct{ name, args, token string }{
	{"echo", `{"x":"a"}`, ""},
	{"echo", ``, ""},
	{"echo", "{\n \"x\" :\r\n \"a\\nb\"\n}", "clawd-x-1"},
	{"echo", "{\"x\":1}\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}", ""},
	{"echo", `{"x":1} {"y":2}`, ""},
	{"echo", `{"x":"a","x":"b"}`, ""},
	{"echo", `{"x":"a","\u0078":"b"}`, ""},
	{"echo", "{\"x\":\"\xff\"}", ""},
	{"echo", ` {"x":1}	`, ""},
	{"echo", `{"x":1}	`, ""},
	{"echo", `{"id":9,"method":"rm","name":"rm","params":{},"jsonrpc":"1"}},"id":"x"`, ""},
	{"echo", `{"a":"\u2028\u2029\n\r","b":[1e400,-0,1.0e-3],"c":{"d":null}}`, ""},
	{"a\"b\n\u2028c", `{}`, `"}`},
	{"echo", `[1,2]`, ""},
	{"echo", `"{}"`, ""},
	{"echo", `{"x":`, ""},
}

func TestToolsCallLineProperties(t *testing.T) {
	for _, s := range callLineSeeds {
		checkToolsCallLine(t, s.name, []byte(s.args), s.token)
	}
}

// Whatever arguments toolsCallLine accepts, its line is one line of one
// JSON-RPC request that encoding/json reads with clawd's id, method and
// tool name and the arguments json.Unmarshal reads from the input; and
// what it refuses encoding/json refuses too, or it is not an object, or
// it gives a name twice or has invalid UTF-8 (or the tool name or the
// progress token has).
func FuzzToolsCallLine(f *testing.F) {
	for _, s := range callLineSeeds {
		f.Add(s.name, []byte(s.args), s.token)
	}
	f.Fuzz(func(t *testing.T, name string, args []byte, token string) {
		checkToolsCallLine(t, name, args, token)
	})
}

func checkToolsCallLine(t *testing.T, name string, args []byte, token string) {
	t.Helper()
	const id = directIDPrefix + "42"
	in := bytes.Clone(args)
	line, err := toolsCallLine(id, name, jsontext.Value(args), map[string]any{"entity": "cc:ws"}, token)
	if !bytes.Equal(args, in) {
		t.Fatalf("toolsCallLine changed its argument: %q became %q", in, args)
	}
	src := args
	if len(src) == 0 {
		src = []byte("{}")
	}
	var want any
	werr := unmarshalNumbers(src, &want)
	if err != nil {
		_, object := want.(map[string]any)
		if werr == nil && object && utf8.Valid(src) && !hasDuplicateNames(src) && utf8.ValidString(name) && utf8.ValidString(token) {
			t.Fatalf("toolsCallLine(%q) refused what encoding/json reads as an object: %v", args, err)
		}
		return
	}
	if werr != nil {
		t.Fatalf("toolsCallLine(%q) accepted what encoding/json refuses (%v): %q", args, werr, line)
	}
	if bytes.IndexByte(line, '\n') != len(line)-1 || bytes.ContainsRune(line, '\r') {
		t.Fatalf("toolsCallLine(%q) is not one line: %q", args, line)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var req struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Method  any    `json:"method"`
		Params  struct {
			Name      any `json:"name"`
			Arguments any `json:"arguments"`
			Meta      struct {
				ProgressToken any `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("toolsCallLine(%q) = %q: %v", args, line, err)
	}
	var more any
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		t.Fatalf("toolsCallLine(%q) = %q: more than one message (%v)", args, line, err)
	}
	if req.JSONRPC != "2.0" || req.ID != id || req.Method != "tools/call" || req.Params.Name != strings.ToValidUTF8(name, "\uFFFD") {
		t.Fatalf("toolsCallLine(%q, %q): envelope %+v", name, args, req)
	}
	if token != "" && req.Params.Meta.ProgressToken != strings.ToValidUTF8(token, "\uFFFD") {
		t.Fatalf("toolsCallLine(progress token %q): %+v", token, req.Params.Meta)
	}
	if !reflect.DeepEqual(req.Params.Arguments, want) {
		t.Fatalf("toolsCallLine(%q) sends arguments %#v, encoding/json reads %#v", args, req.Params.Arguments, want)
	}
}

func unmarshalNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more after the value")
	}
	return nil
}

// hasDuplicateNames: some object in b (valid JSON) gives a name twice.
func hasDuplicateNames(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	var stack []map[string]bool // nil for an array
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, map[string]bool{})
				expectKey = true
				continue
			case '[':
				stack = append(stack, nil)
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
		case string:
			if expectKey {
				top := stack[len(stack)-1]
				if top[v] {
					return true
				}
				top[v] = true
				expectKey = false
				continue
			}
		}
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}
