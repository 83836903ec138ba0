package proc

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitNoReap blocks until the process pid has exited but leaves it a zombie
// (WNOWAIT). While the child is an unreaped zombie its pid cannot be
// reused, so the process-group kill that follows cannot hit an unrelated
// group that got the same number. It returns false if waitid is
// unavailable; the caller then reaps first.
func waitNoReap(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return true
		}
		if !errors.Is(err, syscall.EINTR) {
			return false
		}
	}
}
