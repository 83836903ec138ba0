//go:build darwin || freebsd || netbsd || dragonfly

package rawio

import (
	"sync/atomic"
	"syscall"
)

// rawRead is read(2): this system has no read that cannot wait whatever
// the descriptor's mode, so a descriptor's raw reads rely on its
// non-blocking mode, looked at before each (checkedRead). A nil plain mark
// (a regular file) reads plainly.
func rawRead(fd uintptr, p []byte, plain *atomic.Bool) (int, syscall.Errno) {
	if plain == nil {
		return plainRead(fd, p)
	}
	return checkedRead(fd, p)
}

// rawWrite is write(2), as rawRead is read(2).
func rawWrite(fd uintptr, p []byte, plain *atomic.Bool) (int, syscall.Errno) {
	if plain == nil {
		return plainWrite(fd, p)
	}
	return checkedWrite(fd, p)
}
