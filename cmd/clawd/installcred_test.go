package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallCredentialNoteQuotesTheWorkspace: the note install prints
// about the credential it issues (or would issue) names the workspace as
// one shell word, as install's other messages do: a directory name with
// an escape sequence (an unpacked archive picks it) must not reach the
// terminal, nor a newline split the line.
func TestInstallCredentialNoteQuotesTheWorkspace(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	ws := filepath.Join(home, "p\x1b]0;owned\x07\nINJ")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		args := []string{"install", "opencode", "--transport", "unix_socket", "--workspace", ws}
		if dry {
			args = append(args, "--dry-run")
		}
		var stdout, stderr strings.Builder
		if code := runWith(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%q: exit %d\n%s", args, code, stderr.String())
		}
		out := stdout.String() + stderr.String()
		if strings.ContainsRune(out, 0x1b) || strings.Contains(out, "\nINJ") {
			t.Fatalf("%q: the workspace's name reached the terminal as is:\n%q", args, out)
		}
		if !strings.Contains(stderr.String(), "credential") {
			t.Fatalf("%q: no note about the credential:\n%s", args, stderr.String())
		}
	}
}

// TestInstallTransportTheClientCannotUseIsAUsageError: a client that
// cannot take the asked transport (Cursor, VS Code and Claude Desktop hold
// no fresh credential for HTTP) is a command line that cannot work, exit
// 2 as --hook for a client other than claude-code is, and nothing is
// written.
func TestInstallTransportTheClientCannotUseIsAUsageError(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	ws := filepath.Join(home, "w")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{"cursor", "vscode", "claude-desktop"} {
		var stdout, stderr strings.Builder
		if code := runWith([]string{"install", client, "--transport", "tcp_loopback", "--workspace", ws}, &stdout, &stderr); code != 2 {
			t.Errorf("install %s --transport tcp_loopback: exit %d, want 2\n%s", client, code, stderr.String())
		}
	}
	if ents, _ := os.ReadDir(ws); len(ents) != 1 {
		t.Fatalf("files written: %v", ents)
	}
}
