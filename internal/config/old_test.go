package config

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// testdata/old holds the config files older clawds' `clawd init` wrote
// (their keys and values as written; comments that pointed at documents
// outside the repo were trimmed, which changes nothing a parser reads). A
// user upgrading keeps theirs: each must load as written, and with every
// key (and table header) the file shows commented out set to its example
// value (a user who uncommented them), since no key has been removed or renamed.
func TestOlderInitConfigsStillLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "old", "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no old configs: %v", err)
	}
	commented := regexp.MustCompile(`(?m)^# ?([a-z_]+ = .*|\[[a-z_]+\])$`)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(b); err != nil {
				t.Errorf("as written: %v", err)
			}
			if _, err := Parse(commented.ReplaceAll(b, []byte("$1"))); err != nil {
				t.Errorf("with its commented keys set: %v", err)
			}
		})
	}
}
