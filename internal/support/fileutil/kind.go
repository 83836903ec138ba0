package fileutil

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Kind names what kind of file m is, for messages that refuse it ("a named
// pipe", "a directory", "a regular file"...).
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// FollowLinks follows file while it is a symlink, also one whose target
// does not exist yet, to the path a write through it creates: a dangling
// dotfile link gets its file written, not replaced by one. A relative
// link is resolved from its directory's real path, as the kernel does. A
// file that is not a symlink (or does not exist) is returned as is; more
// than 40 links is an error.
func FollowLinks(file string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(file)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return file, nil
		}
		dest, err := os.Readlink(file)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dir := filepath.Dir(file)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			dest = filepath.Join(dir, dest)
		}
		file = dest
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", file)
}
