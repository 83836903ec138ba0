//go:build unix && !linux

package proc

import "syscall"

// setParentDeathKill: only Linux has a parent-death signal.
func setParentDeathKill(*syscall.SysProcAttr) {}
