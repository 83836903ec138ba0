//go:build unix

package main

import (
	"fmt"
	"syscall"

	"github.com/clawde/clawd/internal/runstate"
)

// signalRotate sends the rotation signal to the daemon, after checking that
// the pid in the state file is the process answering on its address (a
// stale state file must not make us signal an unrelated process, for which
// SIGUSR1 would be fatal).
func signalRotate(st *runstate.State) error {
	pid, err := runstate.ProbeHealth(st.Addr)
	if err != nil {
		return fmt.Errorf("the daemon at http://%s does not answer (%v); is it running?", st.Addr, err)
	}
	if pid != st.PID {
		return fmt.Errorf("http://%s answers as pid %d, but the state file names pid %d; not signalling", st.Addr, pid, st.PID)
	}
	if err := syscall.Kill(st.PID, syscall.SIGUSR1); err != nil {
		return fmt.Errorf("signalling the daemon (pid %d): %v", st.PID, err)
	}
	return nil
}
