package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestNegativePortIsAUsageError: --port -1 is the flags' own "not given",
// so typed on the command line it was taken silently (serve used the
// config's port, health the state file's) although the help and the
// range message say 0..65535. It is a value of the wrong form: exit 2.
func TestNegativePortIsAUsageError(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	missing := filepath.Join(home, "missing")
	for _, args := range [][]string{
		{"serve", "--transport", "tcp_loopback", "--port", "-1", "--workspace", missing},
		{"health", "--port", "-1", "--workspace", missing},
		{"tools", "--port=-1", "--workspace", missing},
	} {
		var stdout, stderr strings.Builder
		if code := runWith(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "0..65535") {
			t.Errorf("clawd %q: exit %d, want 2 naming the range\n%s", args, code, stderr.String())
		}
	}
}
