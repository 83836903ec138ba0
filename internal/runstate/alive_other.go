//go:build !unix

package runstate

import "os"

// Alive reports whether a process with this pid can be found. On Windows
// os.FindProcess opens the process (OpenProcess), which fails once it has
// exited and no handle keeps it; there is no "exists but not ours" case to
// tell apart, since clawd's own daemons run as the same user.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
