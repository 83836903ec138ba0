package mcp

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/jsonrpc"
)

// Both encodings of a tool result (a self-encoding result on the hot path,
// json.Marshal otherwise) carry the same object twice: as structuredContent
// and as its JSON text.
func TestAppendToolResultShapes(t *testing.T) {
	for _, res := range []any{
		&builtin.ReadFileResult{Content: "fn main() {\n\t\"x\"\n}\n" + strings.Repeat("é", 100), SizeBytes: 7, Encoding: "utf8"},
		map[string]any{"exit_code": 0, "stdout": "a\"b\\c\n"},
	} {
		b, err := appendToolResult(jsonrpc.IDFromRaw([]byte(`"id-1"`)), res, false)
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			ID     string `json:"id"`
			Result struct {
				Content []struct {
					Type, Text string
				} `json:"content"`
				StructuredContent map[string]any `json:"structuredContent"`
				IsError           bool           `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &resp, json.MatchCaseInsensitiveNames(true)); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		want, _ := json.Marshal(res)
		var fromText, wantObj map[string]any
		json.Unmarshal([]byte(resp.Result.Content[0].Text), &fromText)
		json.Unmarshal(want, &wantObj)
		if resp.ID != "id-1" || resp.Result.IsError || resp.Result.Content[0].Type != "text" {
			t.Errorf("envelope: %s", b)
		}
		if got, _ := json.Marshal(resp.Result.StructuredContent, json.Deterministic(true)); string(got) != string(mustDet(wantObj)) {
			t.Errorf("structuredContent = %s, want %s", got, want)
		}
		if got := mustDet(fromText); string(got) != string(mustDet(wantObj)) {
			t.Errorf("text = %s, want %s", resp.Result.Content[0].Text, want)
		}
	}
}

func mustDet(v any) []byte {
	b, _ := json.Marshal(v, json.Deterministic(true))
	return b
}
