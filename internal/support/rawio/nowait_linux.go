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
// it) is marked plain and read with read(2), relying on the non-blocking
// mode New checked.
func rawRead(fd uintptr, p []byte, plain *atomic.Bool) (int, syscall.Errno) {
	return nowait(unix.SYS_PREADV2, plainRead, fd, p, plain)
}

// rawWrite is rawRead's counterpart, with pwritev2(RWF_NOWAIT).
func rawWrite(fd uintptr, p []byte, plain *atomic.Bool) (int, syscall.Errno) {
	return nowait(unix.SYS_PWRITEV2, plainWrite, fd, p, plain)
}

// nowait makes the vectored call trap (preadv2 or pwritev2) on p at the
// file's position with RWF_NOWAIT, or the plain call for a plain (or nil)
// mark.
func nowait(trap uintptr, plainCall func(uintptr, []byte) (int, syscall.Errno), fd uintptr, p []byte, plain *atomic.Bool) (int, syscall.Errno) {
	if plain == nil || plain.Load() {
		return plainCall(fd, p)
	}
	iov := unix.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	r, _, e := syscall.RawSyscall6(trap, fd, uintptr(unsafe.Pointer(&iov)), 1, ^uintptr(0), ^uintptr(0), unix.RWF_NOWAIT)
	if e == syscall.EOPNOTSUPP || e == syscall.ENOSYS || e == syscall.EINVAL {
		plain.Store(true)
		return plainCall(fd, p)
	}
	return int(r), e
}
