package identity

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// Rewrite returns the tool arguments args (a JSON object, or empty for {})
// without any member whose decoded name is in strip, and, when name is not
// empty, with name: value appended. Other members are kept in order
// with their values compacted (same JSON, no insignificant whitespace).
//
// The arguments are decoded strictly (jsontext's defaults): a name given
// twice or invalid UTF-8 is an error, so an object cannot carry a second
// copy of a reserved name that a lenient upstream parser would read instead
// of clawd's. Names are compared after unescaping, so "\u005f_mateclaw_user__"
// is stripped too. When nothing is to be added and no stripped name can
// occur (the bytes hold neither a backslash nor any of the names), args is
// returned as it is without decoding.
func Rewrite(args jsontext.Value, strip []string, name, value string) (jsontext.Value, error) {
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	if name == "" && !mayHold(args, strip) {
		return args, nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("the tool arguments are not a JSON object")
	}
	var out bytes.Buffer
	out.Grow(len(args) + len(name) + len(value) + 8)
	enc := jsontext.NewEncoder(&out)
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
		}
		k := tok.String() // the token is void after the next read
		v, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
		}
		if slices.Contains(strip, k) || k == name {
			continue
		}
		if err := enc.WriteToken(jsontext.String(k)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(v); err != nil {
			return nil, err
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("the tool arguments have data after the object")
	}
	if name != "" {
		if err := enc.WriteToken(jsontext.String(name)); err != nil {
			return nil, err
		}
		if err := enc.WriteToken(jsontext.String(value)); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

// mayHold reports whether a member named in names could be in args: only
// when one of the names occurs literally, or an escape could spell one.
func mayHold(args []byte, names []string) bool {
	if bytes.IndexByte(args, '\\') >= 0 {
		return true
	}
	for _, n := range names {
		if n != "" && bytes.Contains(args, []byte(n)) {
			return true
		}
	}
	return false
}
