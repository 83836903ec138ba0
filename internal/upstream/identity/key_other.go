//go:build !unix

package identity

import (
	"fmt"
	"os"

	"github.com/clawde/clawd/internal/support/token"
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

// checkOwner refuses a key file another account owns or may read or
// replace, by its owner and access list, as the session secret's check
// does (token.CheckPrivate): the mode bits say nothing here.
func checkOwner(path string, fi os.FileInfo) error { return token.CheckPrivate(path, fi) }

func versionOf(fi os.FileInfo) keyVersion {
	return keyVersion{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
