package rawio

import (
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawRead reads with preadv2(RWF_NOWAIT), which never waits whatever the
// descriptor's mode: should something sharing the descriptor switch it
// back to blocking mode, a raw read still cannot hold its processor (and
// with it every stop-the-world pause of the garbage collector) until input
// comes. A descriptor that refuses the flag (a kernel before pipes took
// it, a terminal) is marked plain and read with read(2), made raw only
// while the descriptor is in non-blocking mode (checkedRead).
func rawRead(fd uintptr, p []byte, plain *atomic.Bool) (int, syscall.Errno) {
	return nowait(unix.SYS_PREADV2, plainRead, checkedRead, fd, p, plain)
}

// rawWrite is rawRead's counterpart, with pwritev2(RWF_NOWAIT).
func rawWrite(fd uintptr, p []byte, plain *atomic.Bool) (int, syscall.Errno) {
	return nowait(unix.SYS_PWRITEV2, plainWrite, checkedWrite, fd, p, plain)
}

// nowait makes the vectored call trap (preadv2 or pwritev2) on p at the
// file's position with RWF_NOWAIT; for a plain mark, the checked call; for
// a nil one (a regular file, Append), the plain call.
func nowait(trap uintptr, plainCall, checkedCall func(uintptr, []byte) (int, syscall.Errno), fd uintptr, p []byte, plain *atomic.Bool) (int, syscall.Errno) {
	if plain == nil {
		return plainCall(fd, p)
	}
	if plain.Load() {
		return checkedCall(fd, p)
	}
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	r, _, e := syscall.RawSyscall6(trap, fd, uintptr(unsafe.Pointer(&iov)), 1, ^uintptr(0), ^uintptr(0), unix.RWF_NOWAIT)
	if e == syscall.EOPNOTSUPP || e == syscall.ENOSYS || e == syscall.EINVAL {
		plain.Store(true)
		return checkedCall(fd, p)
	}
	return int(r), e
}
