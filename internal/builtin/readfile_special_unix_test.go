//go:build unix

package builtin

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// read_file refuses a special file without opening it. Opening one is not
// harmless: a FIFO's waiting writer is let through (and then gets EPIPE),
// and opening a device runs its driver (a watchdog device is armed by the
// open alone and reboots the machine unless fed) on behalf of a caller
// that may only read. A writer blocked opening the FIFO proves it: it must
// still be waiting after read_file answered.
func TestReadFileDoesNotOpenSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		fd, err := syscall.Open(fifo, syscall.O_WRONLY, 0) // blocks until a reader opens
		if err == nil {
			syscall.Close(fd)
		}
		opened <- err
	}()
	waiting := true
	defer func() {
		// Release the writer if it is still waiting.
		if fd, err := syscall.Open(fifo, syscall.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			if waiting {
				<-opened
			}
			syscall.Close(fd)
		}
	}()
	time.Sleep(50 * time.Millisecond) // let the writer block in open
	_, err := callTool(t, NewReadFile(testEnv(t, dir, nil)), map[string]any{"path": "pipe"})
	if err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("err = %v, want a refusal naming the named pipe", err)
	}
	select {
	case <-opened:
		waiting = false
		t.Error("read_file opened the named pipe: the writer waiting for a reader got through")
	case <-time.After(100 * time.Millisecond):
	}
}
