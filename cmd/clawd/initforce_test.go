package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitExistsSuggestsTheSameFile: the refusal of an existing --config
// file suggests the command that replaces that file; a bare `clawd init
// --force` would overwrite the default config instead, one the user did
// not name.
func TestInitExistsSuggestsTheSameFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	file := filepath.Join(home, "my clawd.toml")
	if err := os.WriteFile(file, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if code := runWith([]string{"init", "--config", file}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
	}
	if want := "clawd init --force --config '" + file + "'"; !strings.Contains(stderr.String(), want) {
		t.Fatalf("refusal does not suggest %s:\n%s", want, stderr.String())
	}
	stderr.Reset()
	if code := runWith([]string{"init"}, &stdout, &stderr); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, stderr.String())
	}
	stderr.Reset()
	if code := runWith([]string{"init"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "`clawd init --force`") {
		t.Fatalf("init over the default file: exit %d\n%s", code, stderr.String())
	}
}
