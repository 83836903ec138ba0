package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/cli/hostadapter"
)

// TestDryRunDiffIsTerminalSafe: --dry-run prints lines of a file that may
// come from a cloned repository; JSONC comments may hold escape sequences
// (clear the screen, set the title, write the clipboard), which are shown
// escaped. CRLF line ends show as plain line ends.
func TestDryRunDiffIsTerminalSafe(t *testing.T) {
	before := "{\r\n  // hi \x1b[2J\x1b]0;pwned\x07 there\r\n  \"servers\": {}\r\n}\r\n"
	after := "{\r\n  // hi \x1b[2J\x1b]0;pwned\x07 there\r\n  \"servers\": {\"clawd\": {}}\r\n}\r\n"
	cmd := &cobra.Command{}
	var out strings.Builder
	cmd.SetOut(&out)
	if err := applyChanges(cmd, []hostadapter.Change{{File: "/p/.vscode/mcp.json", Before: []byte(before), After: []byte(after)}}, true, "installed"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07\r") {
		t.Fatalf("control characters reach the terminal: %q", got)
	}
	if !strings.Contains(got, `\x1b[2J`) || !strings.Contains(got, `+  "servers": {"clawd": {}}`+"\n") {
		t.Fatalf("diff: %q", got)
	}
}
