package proc

import "syscall"

// setParentDeathKill: the kernel sends SIGKILL to the child when the
// thread that forked it dies (Cmd.ParentDeathKill states the limits).
func setParentDeathKill(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
