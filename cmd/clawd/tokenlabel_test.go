package main

import (
	"io"
	"strings"
	"testing"
)

// TestTokenIssueBadLabelIsUsageError: a --label clawd will not store (too
// long, control characters) is bad input, exit 2 naming the label, like
// every other flag value; nothing is issued.
func TestTokenIssueBadLabelIsUsageError(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	ws := t.TempDir()
	for _, label := range []string{"a\nb", "\x1b[2J", strings.Repeat("x", 129), "\xff"} {
		root := newRootCmd()
		root.SetArgs([]string{"token", "issue", "--client", "cc", "--no-save", "--workspace", ws, "--label", label})
		var out strings.Builder
		root.SetOut(&out)
		root.SetErr(io.Discard)
		var msg strings.Builder
		if code := reportError(&msg, root.Execute()); code != 2 || !strings.Contains(msg.String(), "label") || out.Len() != 0 {
			t.Errorf("--label %q: exit %d, stdout %q: %s", label, code, out.String(), msg.String())
		}
	}
}
