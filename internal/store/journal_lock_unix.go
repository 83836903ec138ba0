//go:build unix

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes f's exclusive lock without waiting: false when another
// open file (another process's, or another of this process's) holds it.
// The lock goes with the process: a killed owner's lock is released.
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

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
