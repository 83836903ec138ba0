//go:build darwin || freebsd || netbsd || dragonfly

package rawio

import (
	"sync/atomic"
	"syscall"
)

// rawRead is read(2): this system has no read that cannot wait whatever
// the descriptor's mode, so raw reads rely on the non-blocking mode New
// checked.
func rawRead(fd uintptr, p []byte, _ *atomic.Bool) (int, syscall.Errno) { return plainRead(fd, p) }

// rawWrite is write(2), as rawRead is read(2).
func rawWrite(fd uintptr, p []byte, _ *atomic.Bool) (int, syscall.Errno) { return plainWrite(fd, p) }
