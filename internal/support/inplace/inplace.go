// Package inplace reads JSON where it lies: a pooled jsontext.Decoder over a
// bytes.Buffer, which the decoder parses without first copying it into a
// buffer of its own (as it does from any other io.Reader), and whose values
// can be taken as slices of the input rather than copies. A fresh decoder,
// and that copy, cost more than reading a small message: the request,
// params and result readers on every call's path use this.
package inplace

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Decoder is a strict jsontext.Decoder (plus opts) over data.
type Decoder struct {
	jsontext.Decoder
	in   bytes.Buffer
	data []byte
}

var pool = sync.Pool{New: func() any { return new(Decoder) }}

// Get returns a decoder over data; Release gives it back. data must not
// change while the decoder is in use.
func Get(data []byte, opts ...jsontext.Options) *Decoder {
	d := pool.Get().(*Decoder)
	d.data = data
	d.in = *bytes.NewBuffer(data)
	d.Reset(&d.in, opts...)
	return d
}

// Release returns d to the pool, keeping none of its input alive. d must
// not be used afterwards, nor any value it returned but those of Span.
func (d *Decoder) Release() {
	d.data = nil
	d.in = bytes.Buffer{}
	d.Reset(&d.in)
	pool.Put(d)
}

// Span is v, the value the last ReadValue returned, as a slice of the input
// (capacity capped, so appending to it never writes into the input): valid
// after the next read and after Release, as long as the input is.
func (d *Decoder) Span(v jsontext.Value) jsontext.Value {
	end := int(d.InputOffset())
	return jsontext.Value(d.data[end-len(v) : end : end])
}

// Unquoted is the text of q, one quoted JSON string a decoder has checked:
// q's own bytes between the quotes when it holds no escape (no copy), else
// a new unescaped copy. A name compared with string(Unquoted(q)) costs no
// allocation.
func Unquoted(q jsontext.Value) []byte {
	if bytes.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1]
	}
	u, err := jsontext.AppendUnquote(nil, q)
	if err != nil {
		return nil
	}
	return u
}
