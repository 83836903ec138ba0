package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The diff names each changed field, per leaf inside annotations and
// schemas, and writes invisible characters out so a change hidden in them
// is visible and flagged.
func TestDefinitionDiff(t *testing.T) {
	old := json.RawMessage(`{"annotations":{"destructiveHint":false,"readOnlyHint":true},"description":"the echo tool","inputSchema":{"properties":{"x":{"type":"string"}},"type":"object"},"name":"echo"}`)
	cur := json.RawMessage(`{"annotations":{"destructiveHint":true,"readOnlyHint":true},"description":"the echo tool` + "\u202e\U000E0041" + `\u001b[31m","inputSchema":{"properties":{"x":{"type":"string"},"y":{"type":"number"}},"type":"object"},"name":"echo","title":"Echo"}`)
	got := definitionDiff(old, cur)
	byField := map[string]fieldChange{}
	for _, c := range got {
		byField[c.Field] = c
	}
	if len(got) != 4 {
		t.Errorf("%d changes, want 4: %+v", len(got), got)
	}
	if c := byField["annotations/destructiveHint"]; c.Old != "false" || c.New != "true" {
		t.Errorf("annotation change %+v", c)
	}
	if c := byField["title"]; c.Old != "" || c.New != `"Echo"` {
		t.Errorf("title %+v", c)
	}
	if c := byField["inputSchema/properties/y"]; c.Old != "" || c.New != `{"type":"number"}` {
		t.Errorf("schema leaf %+v", c)
	}
	d := byField["description"]
	if !d.Hidden || !strings.Contains(d.New, `\u202e`) || !strings.Contains(d.New, `[hidden tag text: "A"]`) || !strings.Contains(d.New, `\u001b`) {
		t.Errorf("hidden-only description change %+v", d)
	}
	for _, c := range got {
		if strings.ContainsAny(c.Old+c.New, "\x1b\u202e\U000E0041") {
			t.Errorf("a raw control or invisible character in the diff: %+v", c)
		}
	}
	var buf bytes.Buffer
	printDiffs(&buf, "up", []toolDiff{{Tool: "echo", Exposed: "up__echo", State: "changed", Present: true,
		ApprovedSHA256: "aa", SeenSHA256: "bb", Changes: got}})
	out := buf.String()
	for _, want := range []string{"up__echo (upstream name echo): changed", "~ annotations/destructiveHint:", "was: false", "now: true",
		"+ title: \"Echo\"", "only in escapes or invisible characters", "clawd mcp approve up up__echo --sha256 bb"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff output lacks %q:\n%s", want, out)
		}
	}
	// A new tool: every member is an addition.
	if n := definitionDiff(nil, cur); len(n) != 5 || n[0].Old != "" {
		t.Errorf("new tool diff %+v", n)
	}
}
