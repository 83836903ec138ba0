//go:build darwin || freebsd || netbsd

package upstream

import (
	"os"
	"syscall"
)

// changeTime is the inode change time (ctime), which any write or
// metadata change moves and no system call sets back, and the link count,
// whose change (the file was unlinked or renamed over) moves ctime too.
func changeTime(fi os.FileInfo) (int64, uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		sec, nsec := st.Ctimespec.Unix()
		return sec*1e9 + nsec, uint64(st.Nlink)
	}
	return 0, 0
}
