package transport

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// inputPending reports whether the socket has received bytes nobody has
// read yet (SIOCINQ). Errors count as no.
func inputPending(c net.Conn) bool {
	sc, ok := c.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
	return n > 0
}
