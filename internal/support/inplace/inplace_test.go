package inplace

import (
	"testing"
	"unsafe"
)

// Span is the value read, as a slice of the input itself, capped so an
// append cannot write into the input; the decoder is strict.
func TestSpan(t *testing.T) {
	data := []byte(` {"a": [1, 2], "b": "x"} `)
	d := Get(data)
	if _, err := d.ReadToken(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ReadValue(); err != nil { // the name "a"
		t.Fatal(err)
	}
	v, err := d.ReadValue()
	if err != nil {
		t.Fatal(err)
	}
	span := d.Span(v)
	d.Release()
	if string(span) != "[1, 2]" {
		t.Fatalf("Span = %q, want [1, 2]", span)
	}
	if unsafe.SliceData(span) != &data[7] {
		t.Error("Span is not a slice of the input")
	}
	if cap(span) != len(span) {
		t.Errorf("Span has capacity %d past its length %d: an append would write into the input", cap(span), len(span))
	}

	d = Get([]byte(`{"k":1,"k":2}`))
	defer d.Release()
	var derr error
	for derr == nil {
		_, derr = d.ReadToken()
	}
	if derr.Error() == "EOF" {
		t.Error("a duplicate name was read without an error")
	}
}

// Unquoted returns the string's own bytes when there is nothing to
// unescape, and the unescaped text otherwise.
func TestUnquoted(t *testing.T) {
	q := []byte(`"plain"`)
	if u := Unquoted(q); string(u) != "plain" || unsafe.SliceData(u) != &q[1] {
		t.Errorf("Unquoted(%s) = %q, want plain, sliced from the input", q, u)
	}
	if u := Unquoted([]byte(`"a\u0062\n"`)); string(u) != "ab\n" {
		t.Errorf("Unquoted with escapes = %q, want %q", u, "ab\n")
	}
}
