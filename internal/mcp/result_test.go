package mcp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/tools"
)

// TestCallResultPassthrough: an upstream result is written as it came,
// compacted onto one line, with members absent when the upstream left
// them out.
func TestCallResultPassthrough(t *testing.T) {
	id := jsonrpc.IDFromRaw([]byte(`7`))
	r := &tools.CallResult{
		Content:           jsontext.Value("[\n  {\"type\": \"text\", \"text\": \"a\\nb\"}\n]"),
		StructuredContent: jsontext.Value(" {\"k\":\n [1, 2]} "),
		Meta:              jsontext.Value(`null`),
	}
	b, err := appendToolResult(id, r, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\nb"}],"structuredContent":{"k":[1,2]},"isError":false}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if bytes.ContainsAny(b, "\n\r") {
		t.Error("a raw newline reached the line-framed output")
	}
}

// TestCallResultLineBreaks: a member is copied as it came unless it holds
// a CR or LF (whitespace between its tokens), which would end the answer's
// line for a client reading lines: such a member is compacted.
func TestCallResultLineBreaks(t *testing.T) {
	id := jsonrpc.IDFromRaw([]byte(`1`))
	for _, tc := range []struct{ content, want string }{
		{"[ {\"type\": \"text\",\t\"text\": \"a\"} ]", "[ {\"type\": \"text\",\t\"text\": \"a\"} ]"},
		{"[{\"type\":\"text\",\r\"text\":\"a\"}]", `[{"type":"text","text":"a"}]`},
		{"[{\"type\":\"text\",\"text\":\"a\\r\\n\"}\n]", `[{"type":"text","text":"a\r\n"}]`},
	} {
		b, err := appendToolResult(id, &tools.CallResult{Content: jsontext.Value(tc.content)}, false)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"jsonrpc":"2.0","id":1,"result":{"content":` + tc.want + `,"isError":false}}`
		if string(b) != want || bytes.ContainsAny(b, "\n\r") {
			t.Errorf("content %q:\ngot  %s\nwant %s", tc.content, b, want)
		}
	}
}

// TestCallResultRefusesBrokenMembers: a member that is not one valid JSON
// value of its kind is refused (the call then answers an isError result
// saying the result could not be encoded) instead of being spliced into
// the response.
func TestCallResultRefusesBrokenMembers(t *testing.T) {
	id := jsonrpc.IDFromRaw([]byte(`1`))
	for _, tc := range []struct {
		name string
		r    *tools.CallResult
		want string
	}{
		{"nil", nil, "nil result"},
		{"content missing", &tools.CallResult{}, "content is missing"},
		{"content closes the result early", &tools.CallResult{Content: jsontext.Value(`[]},"id":99,"x":{"a":[1]`)}, "content is not valid JSON"},
		{"content not an array", &tools.CallResult{Content: jsontext.Value(`{"type":"text"}`)}, "content must be an array"},
		{"structuredContent an array", &tools.CallResult{Content: jsontext.Value(`[]`), StructuredContent: jsontext.Value(`[1]`)}, "structuredContent must be an object"},
		{"_meta a string", &tools.CallResult{Content: jsontext.Value(`[]`), Meta: jsontext.Value(`"x"`)}, "_meta must be an object"},
		{"duplicate names", &tools.CallResult{Content: jsontext.Value(`[]`), Meta: jsontext.Value(`{"a":1,"a":2}`)}, "_meta is not valid JSON"},
		{"invalid UTF-8", &tools.CallResult{Content: jsontext.Value("[\"\xff\"]")}, "content is not valid JSON"},
	} {
		b, err := appendToolResult(id, tc.r, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %s, %v; want an error mentioning %q", tc.name, b, err, tc.want)
		}
	}
}

// TestParseCallResult: an upstream provider takes the server's result
// apart with ParseCallResult, which names the member that is wrong.
func TestParseCallResult(t *testing.T) {
	r, err := tools.ParseCallResult(jsontext.Value(`{"content":[{"type":"text","text":"x"}],"isError":true,"other":1}`))
	if err != nil || !r.IsError || string(r.Content) != `[{"type":"text","text":"x"}]` || len(r.StructuredContent) != 0 {
		t.Fatalf("ParseCallResult = %+v, %v", r, err)
	}
	for in, want := range map[string]string{
		`{"isError":false}`:                    "content is missing",
		`{"content":"hi"}`:                     "content must be an array",
		`{"content":[],"structuredContent":3}`: "structuredContent must be an object",
		`[1]`:                                  "upstream tool result",
		`{"content":[],"isError":"yes"}`:       "upstream tool result",
	} {
		if _, err := tools.ParseCallResult(jsontext.Value(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCallResult(%s) = %v, want an error mentioning %q", in, err, want)
		}
	}
}
