package jsonrpc

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// parseReference is Parse as it was before it read its input in place
// with a reused decoder: Parse must return exactly what it did.
func parseReference(data []byte) (Message, *ParseError) {
	// Invalid JSON anywhere is -32700 with a null id; valid JSON of the
	// wrong shape is -32600 with the id if readable. The decoder reads every
	// member value whole, so reaching the end without an error means the
	// document is valid; no separate validation pass is needed. It leaves
	// duplicate names to CheckNames.
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	tok, err := dec.ReadToken()
	if err != nil {
		return Message{}, notJSON()
	}
	if tok.Kind() != '{' {
		if !jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true)) {
			return Message{}, notJSON()
		}
		return Message{}, &ParseError{Err: NewError(CodeInvalidRequest, "invalid request: a message must be a JSON object")}
	}
	var p parser
	for dec.PeekKind() != '}' {
		nameTok, err := dec.ReadToken()
		if err != nil {
			return Message{}, notJSON()
		}
		name := nameTok.String() // the token is void after the next read
		val, err := dec.ReadValue()
		if err != nil {
			return Message{}, notJSON()
		}
		p.member(name, val)
	}
	if _, err := dec.ReadToken(); err != nil {
		return Message{}, notJSON()
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return Message{}, &ParseError{Err: NewError(CodeParseError, "parse error: trailing data after the JSON object")}
	}
	// The document is valid JSON: one pass over its bytes finds equal and
	// case-variant names in every object.
	if nameErr := CheckNames(data); nameErr != nil {
		return p.m, &ParseError{ID: p.m.ID, Err: nameErr}
	}
	p.finish()
	if p.invalid != nil {
		return p.m, &ParseError{ID: p.m.ID, Err: p.invalid}
	}
	return p.m, nil
}

// TestParseMatchesReference holds Parse to parseReference on the fuzz
// seeds and on this file's cases.
func TestParseMatchesReference(t *testing.T) {
	for _, in := range parseDifferentialSeeds {
		checkParseAgainstReference(t, []byte(in))
	}
}

var parseDifferentialSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"read_file","Name":"bash"}}`,
	`{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"p\u0069ng","params":{}}`,
	`{"jsonrpc":"2.0","ID":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":[1]}}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
	`{"jsonrpc":"1.0","id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"x"} {}`,
	`[1]`, `1`, `{`, ``, `   {"jsonrpc":"2.0","id":"a\"b","method":"x"}   `,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
}

func FuzzParseMatchesReference(f *testing.F) {
	for _, in := range parseDifferentialSeeds {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkParseAgainstReference(t, in) })
}

func checkParseAgainstReference(t *testing.T, in []byte) {
	t.Helper()
	m, perr := Parse(bytes.Clone(in))
	wm, wperr := parseReference(bytes.Clone(in))
	if !reflect.DeepEqual(m, wm) || !reflect.DeepEqual(perr, wperr) {
		t.Fatalf("Parse(%q) = %+v, %+v; the reference %+v, %+v", in, m, perr, wm, wperr)
	}
}
