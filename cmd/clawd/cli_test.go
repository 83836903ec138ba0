package main

import (
	"io"
	"strings"
	"testing"
)

// runCLI runs clawd with args in process and returns its exit code and
// the message reportError printed for the error, as main would; stdout
// and stderr are discarded.
func runCLI(args ...string) (int, string) {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	var msg strings.Builder
	return reportError(&msg, root.Execute()), msg.String()
}

// ownHome gives the test a home directory of its own, with
// XDG_DATA_HOME and XDG_CONFIG_HOME unset, so clawd's database, tokens
// and config land there.
func ownHome(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
}
