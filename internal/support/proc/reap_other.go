//go:build !linux

package proc

import (
	"context"
	"errors"
	"time"
)

// Adopting orphans needs Linux's child subreaper; elsewhere an orphan goes
// to init as before, and these do nothing.

func startLock()   {}
func startUnlock() {}
func track(int)    {}
func untrack(int)  {}

// BecomeSubreaper is Linux-only.
func BecomeSubreaper() error {
	return errors.New("adopting orphaned processes (a child subreaper) needs Linux")
}

// IsSubreaper is false outside Linux.
func IsSubreaper() bool { return false }

// Rescan does nothing outside Linux.
func Rescan() {}

// ReapAdopted does nothing outside Linux.
func ReapAdopted() []int { return nil }

// WatchAdopted returns when ctx ends; outside Linux there is nothing to
// adopt.
func WatchAdopted(ctx context.Context, period time.Duration, onAdopted func([]int)) { <-ctx.Done() }
