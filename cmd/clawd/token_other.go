//go:build !unix

package main

import (
	"fmt"
	"runtime"

	"github.com/clawde/clawd/internal/runstate"
)

// signalRotate is not available without user signals: restarting the
// daemon issues a new token (its pid and start time are part of it).
func signalRotate(st *runstate.State) error {
	return fmt.Errorf("token rotation needs a unix signal, unavailable on %s; restart the daemon (pid %d) to get a new token", runtime.GOOS, st.PID)
}
