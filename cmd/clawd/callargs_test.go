package main

import (
	"io"
	"strings"
	"testing"
)

// TestCallBadInputIsUsageError: clawd call refuses, before it looks for a
// daemon, a tool name that no tool can have (empty, a newline, a control
// character) and a --timeout whose milliseconds overflow a duration (one
// wrapped to under a millisecond and cancelled every call at once).
func TestCallBadInputIsUsageError(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	ws := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{""}, "tool"},
		{[]string{"read\nfile"}, "tool"},
		{[]string{"bash\x1b[2J"}, "tool"},
		{[]string{"bash", "--timeout", "18446744073710"}, "--timeout"},
		{[]string{"bash", "--timeout", "9223372036854775807"}, "--timeout"},
		{[]string{"bash", "--timeout", "-1"}, "--timeout"},
	} {
		root := newRootCmd()
		root.SetArgs(append([]string{"call", "--workspace", ws}, tc.args...))
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		var msg strings.Builder
		if code := reportError(&msg, root.Execute()); code != 2 || !strings.Contains(msg.String(), tc.want) {
			t.Errorf("call %q: exit %d: %s", tc.args, code, msg.String())
		}
	}
}
