//go:build unix

package upstream

import (
	"os"
	"syscall"
)

// writeNow writes what of line the pipe rc takes at once, without
// waiting for room, and reports how much that was; err is a failure of the
// write itself (a full pipe is not one: n is 0 then). The write honours
// rc's file's deadline: one already past fails it (os.ErrDeadlineExceeded)
// before anything is written.
func writeNow(rc syscall.RawConn, line []byte) (n int, err error) {
	cerr := rc.Write(func(fd uintptr) bool {
		for {
			n, err = syscall.Write(int(fd), line)
			if err != syscall.EINTR {
				break
			}
		}
		if err == syscall.EAGAIN {
			err = nil
		}
		n = max(n, 0)
		return true // never wait here: the caller does, with its bounds
	})
	if cerr != nil {
		return 0, cerr
	}
	if err != nil {
		return n, os.NewSyscallError("write", err)
	}
	return n, nil
}
