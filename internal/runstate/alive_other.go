//go:build !unix

package runstate

import "os"

// Alive reports whether a process with this pid can be found.
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
