package fileutil

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// TryLock takes f's exclusive lock (LockFileEx, the first byte) without
// waiting: false when another handle holds it. Windows releases a killed
// owner's lock.
func TryLock(f *os.File) (bool, error) {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

// Unlock releases TryLock's lock at once: closing the handle releases it
// too, but Windows does not say when.
func Unlock(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
