package jsonenc

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

var cases = []string{
	"", "a", "hello world", `"`, `\`, "\n", "\x00", "\x1f", "\x7f", "é€😀", "\u2028\u2029<>&",
	"12345678", "1234567\"", "\"1234567", "1234567\n89", strings.Repeat("abcdefghi\n", 100),
	strings.Repeat(`{"k":"v\\n"}`, 50), "tab\there", "\r\n",
}

func TestAppendStringMatchesEncoder(t *testing.T) {
	for _, in := range cases {
		got := AppendString(nil, in)
		if !jsontext.Value(got).IsValid() {
			t.Errorf("AppendString(%q) = %s: invalid JSON", in, got)
			continue
		}
		dec, err := jsontext.AppendUnquote(nil, got)
		if err != nil || string(dec) != in {
			t.Errorf("AppendString(%q) decodes to %q, %v", in, dec, err)
		}
		if b := AppendBytes(nil, []byte(in)); string(b) != string(got) {
			t.Errorf("string and []byte forms differ for %q", in)
		}
	}
}

func TestAppendStringChecked(t *testing.T) {
	got := AppendStringChecked(nil, "ok\xffbad\xc3")
	if string(got) != `"ok`+"\ufffd"+`bad`+"\ufffd"+`"` {
		t.Errorf("AppendStringChecked = %s", got)
	}
	if !jsontext.Value(got).IsValid() {
		t.Error("invalid JSON")
	}
}

func FuzzAppendString(f *testing.F) {
	for _, c := range cases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := AppendStringChecked(nil, in)
		if !jsontext.Value(got).IsValid() {
			t.Fatalf("invalid JSON for %q: %s", in, got)
		}
		want, _ := jsontext.AppendQuote(nil, in)
		a, _ := jsontext.AppendUnquote(nil, got)
		b, _ := jsontext.AppendUnquote(nil, want)
		if string(a) != string(b) {
			t.Fatalf("%q decodes to %q, want %q", in, a, b)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	src := strings.Repeat("func main() {\n\tfmt.Println(\"hello\")\n}\n", 256) // ~10 KB of code
	buf := make([]byte, 0, 2*len(src))
	b.SetBytes(int64(len(src)))
	b.Run("jsonenc", func(b *testing.B) {
		for b.Loop() {
			buf = AppendString(buf[:0], src)
		}
	})
	b.Run("jsontext", func(b *testing.B) {
		for b.Loop() {
			buf, _ = jsontext.AppendQuote(buf[:0], src)
		}
	})
}
