//go:build unix

package fileutil

import (
	"os"
	"syscall"
)

// chownLike gives f the owner and group of like when they differ, as far as
// this process may (root may give any; a user only a group it is in).
func chownLike(f *os.File, like os.FileInfo) {
	want, ok := like.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if st, err := f.Stat(); err == nil {
		if have, ok := st.Sys().(*syscall.Stat_t); ok && have.Uid == want.Uid && have.Gid == want.Gid {
			return
		}
	}
	if f.Chown(int(want.Uid), int(want.Gid)) != nil {
		f.Chown(-1, int(want.Gid))
	}
}
