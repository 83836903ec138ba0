//go:build unix

package hostadapter

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadConfigRefusesWhatIsNotAFile: a project's config comes with the
// repository, so a FIFO or a device there must be refused at once, not
// block install or doctor.
func TestReadConfigRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, ".mcp.json")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	dev := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", dev); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, dev} {
		done := make(chan error, 1)
		go func() { _, err := ReadConfig(p); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("ReadConfig(%s) read it", p)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("ReadConfig(%s) blocked", p)
		}
	}
	if _, err := ReadConfig(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}
