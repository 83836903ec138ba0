package peercred

import (
	"net"

	"golang.org/x/sys/unix"
)

// Of returns the uid (LOCAL_PEERCRED) and, for the log, the pid
// (LOCAL_PEERPID) of the process at the other end of a unix socket
// connection, as the kernel recorded them (the client's at connect, the
// listening server's at listen).
func Of(c *net.UnixConn) (uid, pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, 0, err
	}
	var cred *unix.Xucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if serr == nil {
			pid, _ = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		}
	}); err != nil {
		return -1, 0, err
	}
	if serr != nil {
		return -1, 0, serr
	}
	return int(cred.Uid), pid, nil
}
