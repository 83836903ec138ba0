//go:build unix

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncDirOS makes the entries of dir (a file created or removed) durable.
// A file system that cannot sync a directory (EINVAL, ENOTSUP) is taken
// as it is, as SQLite takes it: failing would refuse every call.
func syncDirOS(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	err = d.Sync()
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		return nil
	}
	return err
}
