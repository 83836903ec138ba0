package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/config"
)

// A doctor fix is a command to paste into a shell: a path in it is one
// shell word, so a config named "my cfg.toml" is not read as --config my
// (which --force would overwrite) and a name holding $(...) runs nothing.
func TestDoctorFixQuotesThePath(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"my cfg.toml", "x$(touch pwned).toml"} {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte("this is not toml ="), 0o600); err != nil {
			t.Fatal(err)
		}
		r := &doctorReport{}
		checkConfig(r, config.Paths{}, file)
		var fix string
		for _, c := range r.Checks {
			if c.Area == "config" {
				fix = c.Fix
			}
		}
		want := "clawd init --force --config '" + file + "'"
		if !strings.HasSuffix(fix, want) {
			t.Errorf("config %q: fix %q; want it to end in %q", name, fix, want)
		}
	}
}
