package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// An upstream tool's result reaches clawd call as the upstream wrote it
// (the daemon passes results through). On a terminal, what could drive it
// (escape sequences, other control characters, bidi overrides, C1
// controls, tag characters) is shown escaped, in text items and in JSON
// alike; newlines and tabs stay, and the JSON stays JSON with the same
// values. Written to a pipe or a file, the output is the result as it came.
func TestCallResultOnATerminalIsEscaped(t *testing.T) {
	const evil = "line one\tx\n\x1b]52;c;aGk=\x07\x1b[2Jgone \u202eevil \u009b31m tag\U000E0041 end"
	text, _ := json.Marshal(evil)
	for _, tc := range []struct {
		name, res string
		asJSON    bool
	}{
		{name: "text", res: `{"content":[{"type":"text","text":` + string(text) + `}],"isError":false}`},
		{name: "structured", res: `{"content":[],"structuredContent":{"v":` + string(text) + `},"isError":false}`},
		{name: "json", res: `{"content":[{"type":"text","text":` + string(text) + `}],"isError":false}`, asJSON: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(f func(any) bool) { outputIsTerminal = f }(outputIsTerminal)
			outputIsTerminal = func(any) bool { return true }
			var b strings.Builder
			if err := printCallResult(&b, "up__get", jsontext.Value(tc.res), tc.asJSON); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if i := strings.IndexAny(got, "\x1b\x07\u202e\u009b\U000E0041"); i >= 0 {
				t.Errorf("a character that drives the terminal reached it raw at %d: %q", i, got)
			}
			if tc.name == "text" && !strings.Contains(got, "line one\tx\n") {
				t.Errorf("newline and tab were not kept: %q", got)
			}
			if tc.name != "text" {
				var v struct {
					V       string `json:"v"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				}
				if err := json.Unmarshal([]byte(got), &v); err != nil {
					t.Fatalf("the escaped output is not JSON any more: %v\n%s", err, got)
				}
				val := v.V
				if len(v.Content) > 0 {
					val = v.Content[0].Text
				}
				if val != evil {
					t.Errorf("the JSON's value changed: %q, want %q", val, evil)
				}
			}
			outputIsTerminal = func(any) bool { return false }
			b.Reset()
			printCallResult(&b, "up__get", jsontext.Value(tc.res), tc.asJSON)
			if tc.name == "text" && b.String() != evil+"\n" {
				t.Errorf("to a pipe the text changed: %q", b.String())
			}
		})
	}
}
