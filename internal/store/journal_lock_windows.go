package store

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// tryLock takes f's exclusive lock without waiting: false when another
// handle holds it. Windows releases a killed owner's lock.
func tryLock(f *os.File) (bool, error) {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

// syncDirOS is a no-op: Windows offers no flush of one directory (only of
// the whole volume); NTFS logs the creation and removal of names itself.
func syncDirOS(string) error { return nil }
