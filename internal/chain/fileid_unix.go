//go:build unix

package chain

import (
	"os"
	"syscall"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// fileIDOf keys a file by device, inode, size, mtime and, where it is read,
// ctime (else mtime stands in for it).
func fileIDOf(fi os.FileInfo) fileID {
	id := fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), uint64(st.Ino) //nolint:unconvert // types differ by platform
		if ct, ok := fileutil.StatChangeTime(st); ok {
			id.ctime, id.changeTracked = ct, true
		}
	}
	return id
}
