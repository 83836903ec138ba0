//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLoadRefusesWhatIsNotAFile: a config path that is a FIFO (which a
// plain open waits on until a writer comes), a device such as /dev/zero
// (read without end) or a file far larger than any config is an error
// naming the file, at once; every clawd command and the daemon's reload
// read it.
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte(strings.Repeat("# comment\n", MaxFileBytes/10+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero", big} {
		done := make(chan error, 1)
		go func() { _, err := Load(p, true); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("%s: %v", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) did not return", p)
		}
	}
}
