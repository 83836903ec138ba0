package main

import (
	"io"
	"strings"
	"testing"
)

// TestMCPAllowMissingHashSaysWhatToPass: --server with pins but no
// --sha256 names the missing flag and where its value comes from, instead
// of rejecting an empty hash nobody typed.
func TestMCPAllowMissingHashSaysWhatToPass(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"mcp", "allow", "--server", "x", "--package", "p@1", "--integrity", "sha512-x"}, []string{"--sha256 HEX is required", "sha256sum", "clawd mcp allow x"}},
		{[]string{"mcp", "allow", "--server", "x"}, []string{"--sha256 HEX is required"}},
		{[]string{"mcp", "allow", "--server", "x", "--sha256", "abc"}, []string{`sha256 "abc"`}},
	} {
		root := newRootCmd()
		root.SetArgs(tc.args)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		var msg strings.Builder
		code := reportError(&msg, root.Execute())
		if code != 2 || strings.Contains(msg.String(), `sha256 ""`) {
			t.Errorf("clawd %v: exit %d, want 2:\n%s", tc.args, code, msg.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(msg.String(), w) {
				t.Errorf("clawd %v: message lacks %q:\n%s", tc.args, w, msg.String())
			}
		}
	}
}
