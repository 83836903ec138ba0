package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUserValuesStayOnOneLine: a path or name given on the command line
// is shown quoted in an error, so a newline in it cannot split the message
// into lines that look like clawd's own.
func TestUserValuesStayOnOneLine(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	missing := filepath.Join(home, "missing", "x\nINJ")
	existing := filepath.Join(home, "x\nINJ")
	if err := os.Mkdir(existing, 0o700); err != nil {
		t.Fatal(err)
	}
	// A config path under a regular file: lstat fails with ENOTDIR.
	file := filepath.Join(home, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	underFile := filepath.Join(file, "x\nINJ", "c.toml")
	for _, args := range [][]string{
		{"serve", "--workspace", missing},
		{"serve", "--config", missing},
		{"serve", "--config", existing},
		{"health", "--workspace", missing},
		{"health", "--workspace", existing},
		{"tools", "--workspace", existing},
		{"connect", "--workspace", existing},
		{"token", "show", "--workspace", missing},
		{"install", "claude-code", "--workspace", existing},
		{"init", "--config", existing},
		{"init", "--config", underFile},
		{"mcp", "add", "x", "--cwd", missing, "--stdio", "--", "true"},
		{"mcp", "add", "x", "--cwd", "/tmp\n", "--stdio", "--", "true"},
		{"call", "read_file", "--params", "x\nINJ"},
	} {
		var stdout, stderr strings.Builder
		code := runWith(args, &stdout, &stderr)
		if code == 0 {
			t.Errorf("clawd %q: exit 0", args)
		}
		for _, l := range strings.Split(stdout.String()+stderr.String(), "\n") {
			if strings.HasPrefix(l, "INJ") || l == " --stdio -- true" || strings.HasPrefix(l, ": ") {
				t.Errorf("clawd %q: a given value split the message:\n%s", args, stderr.String())
				break
			}
		}
	}
}
