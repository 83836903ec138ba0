//go:build unix

package fileutil

import (
	"os"
	"syscall"
)

// ChangeTime is the inode change time of a file os.Stat or Lstat
// described, where StatChangeTime reads it; ok is false otherwise.
func ChangeTime(fi os.FileInfo) (ns int64, ok bool) {
	if st, isStat := fi.Sys().(*syscall.Stat_t); isStat {
		return StatChangeTime(st)
	}
	return 0, false
}
