//go:build unix

package daemon

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// RotateSignal is the signal `clawd token rotate` sends to a running
// tcp_loopback daemon. Only the daemon's user (or root) may signal it, so
// the right to rotate is the OS's own same-user check, and no secret is
// needed to ask for a new one (a lost token file can still be rotated).
const RotateSignal = syscall.SIGUSR1

// notifyRotate calls rotate on every RotateSignal until ctx ends.
func notifyRotate(ctx context.Context, rotate func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, RotateSignal)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-ch:
				rotate()
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
