//go:build unix

package fileutil

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A FIFO with no writer opens at once (a plain open would wait for a
// writer forever), and the caller's Stat sees it is not a regular file.
func TestOpenNoWaitFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := OpenNoWait(path)
		if err == nil {
			var fi os.FileInfo
			fi, err = f.Stat()
			if err == nil && fi.Mode().IsRegular() {
				t.Error("a FIFO stats as a regular file")
			}
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("opening a FIFO without a writer blocked")
	}
}
