package main

import (
	"path/filepath"
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

// TestNotAProjectNamesTheFile: outside a git checkout, install asks for
// --project or --user and names the file --project would write, with its
// directory (.cursor/mcp.json, not mcp.json).
func TestNotAProjectNamesTheFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME"} {
		t.Setenv(v, "")
	}
	for client, file := range map[string]string{"cursor": ".cursor/mcp.json", "vscode": ".vscode/mcp.json", "claude-code": ".mcp.json", "opencode": "opencode.json"} {
		file = filepath.FromSlash(file)
		f := installFlags{workspace: t.TempDir(), transport: hostadapter.Stdio}
		_, _, err := f.resolve(client, true)
		if err == nil || !strings.Contains(err.Error(), "no "+file+")") || !strings.Contains(err.Error(), "write "+file+" there") {
			t.Errorf("%s: %v; want it to name %s", client, err, file)
		}
	}
}
