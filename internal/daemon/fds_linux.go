package daemon

import "golang.org/x/sys/unix"

// closeRangeCloexec marks every descriptor from 3 up close-on-exec in one
// system call. It reports false before Linux 5.11 (ENOSYS) or when a
// seccomp filter refuses it, and the caller then lists the descriptors.
func closeRangeCloexec() bool {
	return unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil
}
