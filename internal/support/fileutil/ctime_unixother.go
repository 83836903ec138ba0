//go:build unix && !linux && !darwin && !freebsd && !netbsd

package fileutil

import "syscall"

// StatChangeTime: not read on this system (ok is false); callers fall back
// to size and modification time.
func StatChangeTime(*syscall.Stat_t) (ns int64, ok bool) { return 0, false }
