package main

import (
	"io"
	"strings"
	"testing"
)

// TestMCPServerNameRefused: every command that takes a server's NAME
// refuses one no server can have before it opens the store, with exit 2
// and the same message, the store's rule for names.
func TestMCPServerNameRefused(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	const want = `clawd: server name "a__b": '__' and a trailing '_' are reserved for the NAME__TOOL separator; ` +
		`use 1-128 letters, digits, '-' or '_', starting with a letter or digit, without '__' and not ending in '_' (tools are exposed as NAME__TOOL)` + "\n"
	for _, args := range [][]string{
		{"mcp", "add", "a__b", "--stdio", "--", "true"},
		{"mcp", "allow", "a__b"},
		{"mcp", "set", "a__b", "--identity", "meta"},
		{"mcp", "approve", "a__b"},
		{"mcp", "diff", "a__b"},
		{"mcp", "show", "a__b"},
		{"mcp", "rm", "a__b"},
		{"mcp", "enable", "a__b"},
		{"mcp", "disable", "a__b"},
		{"mcp", "tools", "a__b"},
		{"mcp", "test", "a__b"},
		{"mcp", "logs", "a__b"},
		{"mcp", "refresh", "a__b"},
	} {
		var stderr strings.Builder
		if code := runWith(args, io.Discard, &stderr); code != 2 || stderr.String() != want {
			t.Errorf("clawd %s: exit %d, want 2 with\n%s\ngot\n%s", strings.Join(args, " "), code, want, stderr.String())
		}
	}
}
