package daemon

import (
	"testing"

	"github.com/clawde/clawd/test/clawdtest"
)

// BenchmarkHealth is the daemon's share of GET /health: building the
// health object, active_tools included.
func BenchmarkHealth(b *testing.B) {
	clawdtest.IsolateHome(b)
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
