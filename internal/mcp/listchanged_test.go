package mcp

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestDebouncerCoalescesAndBounds: a burst fires once, after the burst;
// changes that never pause for the delay still fire every max, so a
// flapping provider cannot silence list_changed.
func TestDebouncerCoalescesAndBounds(t *testing.T) {
	var fired atomic.Int64
	d := &debouncer{delay: 10 * time.Millisecond, max: 100 * time.Millisecond, fire: func() { fired.Add(1) }}
	for range 1000 {
		d.changed()
	}
	waitFor(t, func() bool { return fired.Load() >= 1 })
	time.Sleep(50 * time.Millisecond)
	if n := fired.Load(); n != 1 {
		t.Errorf("a burst of 1000 changes fired %d times, want 1", n)
	}

	fired.Store(0)
	end := time.Now().Add(time.Second)
	for time.Now().Before(end) {
		d.changed()
		time.Sleep(2 * time.Millisecond) // always sooner than delay
	}
	if n := fired.Load(); n < 2 {
		t.Errorf("1 s of changes 2 ms apart fired %d times, want at least 2 (every max = 100 ms)", n)
	}
}
