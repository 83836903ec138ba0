//go:build unix

package fileutil

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// TryLock takes f's exclusive advisory lock (flock) without waiting: false
// when another open file, another process's or another of this process's,
// holds it. The lock goes with the open file: a killed owner's is released.
func TryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// Unlock releases TryLock's lock before f is closed (closing releases it
// too).
func Unlock(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }
