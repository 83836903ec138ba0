//go:build unix

package chain

import (
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestHashReadDoesNotBlockOnAFIFO: Sum stats a regular file, then opens
// it; a file swapped for a FIFO in between must give an error, not an
// open that waits for a writer forever (with it the call, tools/list or
// /health that asked). read is the part after the stat.
func TestHashReadDoesNotBlockOnAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "server.js")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var h HashCache
	done := make(chan error, 1)
	go func() {
		_, err := h.read(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a FIFO was hashed as if it were the script")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hashing a FIFO blocked (waiting for a writer)")
	}
}
