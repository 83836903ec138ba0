package main

import (
	"io"
	"testing"
)

// TestUnknownShellIsUsageError: `clawd completion` with no shell or one it
// does not know is a usage error (exit 2), like every other command group,
// not a help page with exit 0; a known shell still prints its script.
func TestUnknownShellIsUsageError(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}} {
		root := newRootCmd()
		root.SetArgs(args)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		if code := reportError(io.Discard, root.Execute()); code != 2 {
			t.Errorf("clawd %v: exit %d, want 2", args, code)
		}
	}
	root := newRootCmd()
	root.SetArgs([]string{"completion", "bash"})
	root.SetOut(io.Discard)
	if code := reportError(io.Discard, root.Execute()); code != 0 {
		t.Errorf("clawd completion bash: exit %d", code)
	}
}
