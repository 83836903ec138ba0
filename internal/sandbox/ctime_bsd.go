//go:build darwin || freebsd || netbsd

package sandbox

import "syscall"

func ctimeNano(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
