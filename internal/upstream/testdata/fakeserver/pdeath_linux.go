package main

import "syscall"

// clearParentDeathSignal undoes PR_SET_PDEATHSIG, as a server that resets
// its own process attributes would.
func clearParentDeathSignal() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, 0, 0)
}
