//go:build unix

package runstate

import (
	"syscall"
)

// Alive reports whether a process of this user with this pid exists: the
// daemon a state file names runs as this user, so a pid held by another
// user's process (signal 0 gives EPERM, or on Linux the process's
// effective uid differs, which root's signal 0 would not show) is not it.
// That user may have forked until a dead daemon's pid was theirs.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return syscall.Kill(pid, 0) == nil && ownProcess(pid)
}
