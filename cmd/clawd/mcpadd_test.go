package main

import (
	"io"
	"strings"
	"testing"
)

// TestMCPAddFlagErrorHint: an unknown flag on a command line without --
// was probably meant for the stdio server's command, and the usage error
// says that it goes after --; with a -- on the command line the flag was
// add's own, mistyped, and there is no such hint. Either way the usage
// line follows and the exit is 2. The command line is the one run was
// given, not the process's.
func TestMCPAddFlagErrorHint(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	const hint = "go after --"
	for _, tc := range []struct {
		args []string
		hint bool
	}{
		{[]string{"mcp", "add", "x", "--stdio", "npx", "-y", "pkg"}, true},
		{[]string{"mcp", "add", "x", "--stdio", "--bogus", "--", "npx", "-y", "pkg"}, false},
		{[]string{"mcp", "add", "x", "--stdio", "--connect-timeout", "soon", "--", "npx"}, false},
	} {
		var stderr strings.Builder
		code := runWith(tc.args, io.Discard, &stderr)
		msg := stderr.String()
		if code != 2 || !strings.Contains(msg, "usage: clawd mcp add NAME --stdio") {
			t.Errorf("clawd %v: exit %d, want 2 with the usage line:\n%s", tc.args, code, msg)
		}
		if got := strings.Contains(msg, hint); got != tc.hint {
			t.Errorf("clawd %v: hint %q shown: %v, want %v:\n%s", tc.args, hint, got, tc.hint, msg)
		}
	}
}
