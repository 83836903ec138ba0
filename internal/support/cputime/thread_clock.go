//go:build linux || darwin || freebsd

package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Thread is the CPU time the calling OS thread has used so far, and true;
// false where it cannot be read. The caller must hold its thread
// (runtime.LockOSThread) between two readings for their difference to mean
// anything. Unlike Process it leaves out what other goroutines of the
// process (tests running in parallel, the collector's workers) used, and
// unlike wall time what other processes took from this one. It is read
// from the thread's CPU clock, to the nanosecond: getrusage's per-thread
// times move in scheduler ticks of up to 10 ms.
func Thread() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
