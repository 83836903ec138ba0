//go:build !unix

package identity

import (
	"fmt"
	"os"
)

// openNoFollow refuses a symlink by Lstat first (Windows has no
// O_NOFOLLOW); the data directory is private to the user (MkdirPrivate).
func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, errSymlink
	}
	return os.Open(path)
}

var errSymlink = fmt.Errorf("symbolic link")

func isSymlinkErr(err error) bool { return err == errSymlink }

// modeChecked: Windows permission bits do not say who can read a file
// (its ACL does, which fileutil.MakePrivate sets when clawd writes it).
const modeChecked = false

// checkOwner: the file's ACL is set by fileutil.MakePrivate when clawd
// writes it; ownership is not checked on this platform.
func checkOwner(os.FileInfo) error { return nil }

func versionOf(fi os.FileInfo) keyVersion {
	return keyVersion{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
