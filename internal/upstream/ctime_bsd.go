//go:build darwin || freebsd || netbsd

package upstream

import (
	"os"
	"syscall"
)

// changeTime is the inode change time (ctime) in nanoseconds, which any
// write or metadata change moves and no system call sets back.
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctimespec.Nano()
	}
	return 0
}
