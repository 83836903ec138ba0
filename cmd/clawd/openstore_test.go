package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnusableDataDirNamesTheFix: when the data directory cannot be
// created or written (here a file stands where it should be; a read-only
// directory fails the same way for a user who is not root), every command
// that opens the database exits 1 and says what lives there and what to
// check, as clawd serve does, not only SQLite's or the OS's words.
func TestUnusableDataDirNamesTheFix(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	if err := os.MkdirAll(filepath.Join(home, ".local"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".local", "share"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"trust", "list"},
		{"trust", "set", "local:x", "2"},
		{"audit"},
		{"egress", "allow", "https://a.example"},
		{"mcp", "list", "--json"},
	} {
		root := newRootCmd()
		root.SetArgs(args)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		var msg strings.Builder
		if code := reportError(&msg, root.Execute()); code != 1 || !strings.Contains(msg.String(), "XDG_DATA_HOME") {
			t.Errorf("clawd %v: exit %d: %s", args, code, msg.String())
		}
	}
}
