package upstream

import (
	"runtime"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/cputime"
	"github.com/clawde/clawd/internal/support/race"
)

// growthRatio fails t if large, given scale times the input of small,
// takes more than 4*scale times as long: linear work grows scale times,
// quadratic work scale*scale times. Each is timed best of three, so that a
// collection in one run does not decide, and the two are compared with
// each other rather than with a bound, so the check says the same on a
// fast machine and a slow one. Where it can be read (Linux) the time is the
// CPU time of the thread the work ran on, so neither other processes on a
// loaded machine nor tests running in parallel count; elsewhere it is wall
// time. Times under 50 ms are too small to compare and pass. Under the race
// detector, which slows large inputs more than small ones, only the times
// are logged.
func growthRatio(t *testing.T, what string, small, large func(), scale int) {
	t.Helper()
	smallTime, largeTime := bestOf3(small), bestOf3(large)
	t.Logf("%s: %v, %dx the input %v", what, smallTime, scale, largeTime)
	if race.Enabled {
		return
	}
	if largeTime > 50*time.Millisecond && largeTime > time.Duration(4*scale)*smallTime {
		t.Errorf("%s: %v, and %v for %dx the input: more than %dx", what, smallTime, largeTime, scale, 4*scale)
	}
}

func bestOf3(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		cpu, onThread := cputime.Thread()
		f()
		if end, ok := cputime.Thread(); onThread && ok {
			best = min(best, end-cpu)
		} else {
			best = min(best, time.Since(start))
		}
	}
	return best
}
