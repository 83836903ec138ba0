//go:build unix

package identity

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// openNoFollow opens path for reading without following a final symlink
// and without blocking on a FIFO (or making a terminal clawd's controlling
// one), so what is checked is what is read.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

func isSymlinkErr(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(pe.Err, syscall.ELOOP)
}

// modeChecked: Unix permission bits say who can read the file.
const modeChecked = true

// checkOwner requires the file to belong to the user clawd runs as.
func checkOwner(_ string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("owner uid %d, clawd runs as uid %d", st.Uid, uid)
	}
	return nil
}

func versionOf(fi os.FileInfo) keyVersion {
	v := keyVersion{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		v.dev, v.ino = uint64(st.Dev), uint64(st.Ino) //nolint:unconvert // types differ by platform
		v.ctime, _ = fileutil.StatChangeTime(st)      // 0 where not read: size, times and inode decide
	}
	return v
}
