package tools

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/support/jsonnames"
)

// parseCallResultReference is ParseCallResult as it was written first, with
// the reflecting decoder: the in-place read must accept and return exactly
// what it did.
func parseCallResultReference(raw jsontext.Value) (*CallResult, error) {
	var m struct {
		Content           jsontext.Value `json:"content"`
		StructuredContent jsontext.Value `json:"structuredContent"`
		IsError           bool           `json:"isError"`
		Meta              jsontext.Value `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("upstream tool result: %w", err)
	}
	r := &CallResult{Content: m.Content, StructuredContent: m.StructuredContent, IsError: m.IsError, Meta: m.Meta}
	if err := r.Check(); err != nil {
		return nil, err
	}
	if m := jsonnames.Collision(raw); m != "" {
		return nil, fmt.Errorf("%s", m)
	}
	return r, nil
}

// TestParseCallResultRefusesCaseVariants: names that differ only by case,
// at any depth, refuse the result, as they refuse a request: a client
// decoder matching names case-insensitively would pick one of the two.
func TestParseCallResultRefusesCaseVariants(t *testing.T) {
	for _, in := range []string{
		`{"content":[{"type":"text","Type":"image","text":"a"}]}`,
		`{"content":[],"Content":[{"type":"text","text":"a"}]}`,
		`{"content":[],"structuredContent":{"a":{"k":1,"\u212a":2}}}`,
	} {
		if r, err := ParseCallResult(jsontext.Value(in)); err == nil || !strings.Contains(err.Error(), "differ only by case") {
			t.Errorf("ParseCallResult(%s) = %+v, %v; want it refused for names differing by case", in, r, err)
		}
	}
}

var callResultSeeds = []string{
	`{"content":[{"type":"text","text":"x"}],"isError":true,"other":1}`,
	`{"content":[],"structuredContent":{"a":1},"_meta":{"k":"v"},"isError":false}`,
	` {"content" : [ 1 , 2 ] , "isError" : null } `,
	`{"content":[],"isError":"yes"}`,
	`{"content":[],"content":[]}`,
	`{"content":[{"a":1,"a":2}]}`,
	`{"Content":[]}`,
	`{"CONTENT":[],"content":[]}`,
	`{"content":[]}{}`,
	`{"content":[]} x`,
	`null`,
	`[1]`,
	`"s"`,
	`{"content":"hi"}`,
	`{"content":[],"structuredContent":3}`,
	`{"content":[],"structuredContent":null,"_meta":null}`,
	`{"content":[],"_meta":[]}`,
	"{\"content\":[\"\xff\"]}",
	`{"content":[],"other":{"x":1,"x":2}}`,
	`{"content":[],"isError":1}`,
	`{"content":[]`,
	``,
	`{"content":[],"\u0063ontent":[]}`,
	`{"\u0063ontent":[1]}`,
}

// TestParseCallResultMatchesReference holds the in-place read to the
// reflecting decoder on the seeds (FuzzParseCallResult goes further).
func TestParseCallResultMatchesReference(t *testing.T) {
	for _, in := range callResultSeeds {
		checkAgainstReference(t, []byte(in))
	}
}

func FuzzParseCallResult(f *testing.F) {
	for _, in := range callResultSeeds {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkAgainstReference(t, in) })
}

func checkAgainstReference(t *testing.T, in []byte) {
	t.Helper()
	got, gerr := ParseCallResult(bytes.Clone(in))
	want, werr := parseCallResultReference(bytes.Clone(in))
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("ParseCallResult(%q): error %v, the reference's %v", in, gerr, werr)
	}
	if gerr != nil {
		return
	}
	if !bytes.Equal(got.Content, want.Content) || !bytes.Equal(got.StructuredContent, want.StructuredContent) ||
		!bytes.Equal(got.Meta, want.Meta) || got.IsError != want.IsError {
		t.Fatalf("ParseCallResult(%q) = %+v, the reference %+v", in, got, want)
	}
}

// BenchmarkParseCallResult: server-everything's echo result, and a 1 MiB
// text result; the in-place read against the reflecting decoder.
func BenchmarkParseCallResult(b *testing.B) {
	large := []byte(`{"content":[{"type":"text","text":"` + string(bytes.Repeat([]byte("x"), 1<<20)) + `"}],"isError":false}`)
	for _, in := range []struct {
		name string
		raw  []byte
	}{{"echo", []byte(`{"content":[{"type":"text","text":"Echo: hello from the benchmark"}]}`)}, {"1MiB", large}} {
		for _, p := range []struct {
			name  string
			parse func(jsontext.Value) (*CallResult, error)
		}{{"in-place", ParseCallResult}, {"reference", parseCallResultReference}} {
			b.Run(in.name+"/"+p.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.raw)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := p.parse(in.raw); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A member replaced after ParseCallResult is checked again: Check skips
// only the bytes the parse itself read and checked.
func TestCheckRereadsReplacedMembers(t *testing.T) {
	r, err := ParseCallResult(jsontext.Value(`{"content":[{"type":"text","text":"a"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(); err != nil {
		t.Fatalf("Check of the parsed result: %v", err)
	}
	r.Content = jsontext.Value(`[{"type":"text"},{"a":1,"a":2}]`)
	if err := r.Check(); err == nil {
		t.Fatal("Check passed a replaced content with a duplicate name")
	}
	copied := &CallResult{Content: jsontext.Value("[\"\xff\"]")}
	if err := copied.Check(); err == nil {
		t.Fatal("Check passed a result ParseCallResult never read")
	}
}
