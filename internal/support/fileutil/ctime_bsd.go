//go:build darwin || freebsd || netbsd

package fileutil

import "syscall"

// StatChangeTime is st's inode change time (ctime) in nanoseconds: any
// write or metadata change moves it, and no system call sets it back, so
// it tells a rewritten file from one whose size and mtime were restored.
// ok is false on systems where clawd does not read it.
func StatChangeTime(st *syscall.Stat_t) (ns int64, ok bool) { return st.Ctimespec.Nano(), true }
