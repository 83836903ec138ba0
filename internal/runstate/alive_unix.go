//go:build unix

package runstate

import (
	"errors"
	"syscall"
)

// Alive reports whether a process with this pid exists (signal 0). EPERM
// means it exists but belongs to another user.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
