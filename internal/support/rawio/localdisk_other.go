//go:build !linux

package rawio

import "os"

// LocalDisk is false here: where file system types are not checked, the
// journal's appends are os.File's.
func LocalDisk(f *os.File) bool { return false }
