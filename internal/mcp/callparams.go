package mcp

import (
	"bytes"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/support/inplace"
)

// decodeCallParams reads a tools/call's params (a JSON object, or empty)
// into p as json.Unmarshal would, which it calls whenever the params are
// anything but the plain shape: a decoder per call and a copy of each
// member cost more than the rest of reading a small call. The plain shape
// is an object whose members are each named exactly "name" (a string or
// null), "arguments" or "_meta" (any value), or a name that matches none
// of the three in any case; given once each. The values are slices of
// params (a message's own copy, never reused), not copies.
func decodeCallParams(params jsontext.Value, p *callParams) error {
	if fastCallParams(params, p) {
		return nil
	}
	*p = callParams{}
	return json.Unmarshal(orEmpty(params), p)
}

// fastCallParams decodes params into p when it has the plain shape, and
// reports whether it did; p is undefined otherwise.
func fastCallParams(params jsontext.Value, p *callParams) bool {
	if len(params) == 0 {
		return true
	}
	dec := inplace.Get(params) // strict: valid UTF-8, no name given twice
	defer dec.Release()
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	for dec.PeekKind() != '}' {
		q, err := dec.ReadValue()
		if err != nil || bytes.IndexByte(q, '\\') >= 0 {
			return false
		}
		name := q[1 : len(q)-1]
		v, err := dec.ReadValue()
		if err != nil {
			return false
		}
		v = dec.Span(v)
		switch string(name) { // compared, not copied
		case "name":
			switch v.Kind() {
			case '"':
				if bytes.IndexByte(v, '\\') >= 0 {
					return false
				}
				s := string(v[1 : len(v)-1])
				p.Name = &s
			case 'n':
				p.Name = nil
			default:
				return false
			}
		case "arguments":
			p.Arguments = v
		case "_meta":
			p.Meta = v
		default:
			if bytes.EqualFold(name, []byte("name")) || bytes.EqualFold(name, []byte("arguments")) || bytes.EqualFold(name, []byte("_meta")) {
				return false // how the reflecting decoder matches case is its business
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	_, err := dec.ReadToken()
	return err == io.EOF
}
