package daemon

import (
	"path/filepath"
	"testing"
)

// BenchmarkHealth is the daemon's share of GET /health: building the
// health object, active_tools included.
func BenchmarkHealth(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	b.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	b.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	d, err := New(Options{Workspace: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	b.ReportAllocs()
	for b.Loop() {
		d.Health()
	}
}
