package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/runstate"
)

// TestTokenShowWarningQuotesPaths: the warning token show prints when no
// daemon runs names the workspace and the token file as one shell word
// each, so a directory whose name holds a line break or a terminal escape
// can neither forge a line of its own nor drive the terminal.
func TestTokenShowWarningQuotesPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	ws := filepath.Join(t.TempDir(), "a\x1b[31mb\nc")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := runstate.ResolveWorkspace(runstate.Options{Workspace: ws, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(w.TokenPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.TokenPath, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	if code := runWith([]string{"token", "show", "--workspace", ws}, &out, &errOut); code != 0 {
		t.Fatalf("token show: exit %d: %s", code, errOut.String())
	}
	msg := errOut.String()
	if strings.Contains(msg, "\x1b") || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, shellWord(w.Dir)) {
		t.Errorf("the warning does not quote the workspace as one shell word:\n%q", msg)
	}
}
