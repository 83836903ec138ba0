package transport

import (
	"errors"
	"log/slog"
	"time"
)

// acceptBackoff paces the retries after an Accept that failed for a reason
// that may pass, above all running out of file descriptors (EMFILE,
// ENFILE). A daemon that stopped
// serving because a burst of bash calls held every descriptor for a moment
// would leave its clients with nothing to talk to, so it waits and tries
// again, as net/http's Serve does: 5 ms, doubling up to 1 s.
type acceptBackoff struct {
	delay time.Duration
	log   *slog.Logger
}

// wait reports whether err is worth another Accept and, if it is, sleeps
// for the next delay or until done is closed (then false: stop).
func (b *acceptBackoff) wait(err error, done <-chan struct{}) bool {
	// net.Error's Temporary is deprecated for its vague meaning on reads,
	// but on Accept it is the set of errors that can pass (EMFILE, ENFILE,
	// EINTR and the timeouts; Go itself retries a connection aborted before
	// it was accepted), and it is what net/http relies on.
	var te interface{ Temporary() bool }
	if !errors.As(err, &te) || !te.Temporary() {
		return false
	}
	b.delay = min(max(2*b.delay, 5*time.Millisecond), time.Second)
	b.log.Warn("accept failed; retrying", "err", err, "in", b.delay)
	t := time.NewTimer(b.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// reset starts the next run of failures from the shortest delay.
func (b *acceptBackoff) reset() { b.delay = 0 }
