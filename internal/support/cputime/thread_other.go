//go:build !linux && !darwin && !freebsd

package cputime

import "time"

// Thread reports false where a thread's CPU clock is not read; callers
// fall back to wall time.
func Thread() (time.Duration, bool) { return 0, false }
