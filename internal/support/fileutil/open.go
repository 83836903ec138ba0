package fileutil

import (
	"os"
	"syscall"
)

// OpenNoWait opens path read-only for a caller that then checks it is a
// regular file (Stat on the descriptor) before reading it: a path an agent
// can write to may have been swapped for a FIFO, which a plain open would
// wait on until a writer came (and every request waiting on that open with
// it), or for a terminal, which O_NOCTTY keeps from becoming clawd's
// controlling terminal. On a regular file the flags change nothing.
func OpenNoWait(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
