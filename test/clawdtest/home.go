package clawdtest

import (
	"path/filepath"
	"testing"
)

// IsolateHome points HOME and the XDG variables of this test process at a
// fresh temporary directory, the same layout Environ gives a child, so an
// in-process daemon reads and writes nothing of the real user's. It
// returns the home directory, symlinks resolved (as clawd resolves the
// paths it derives); the variables are restored after the test.
func IsolateHome(tb testing.TB) string {
	home, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Setenv("HOME", home)
	tb.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	tb.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	tb.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	return home
}
