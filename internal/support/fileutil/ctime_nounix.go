//go:build !unix

package fileutil

import "os"

// ChangeTime: Windows (and other non-unix systems) has no inode change
// time in os.FileInfo; ok is false and callers compare size and
// modification time alone.
func ChangeTime(os.FileInfo) (ns int64, ok bool) { return 0, false }
