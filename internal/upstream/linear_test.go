package upstream

import (
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/cputime"
	"github.com/clawde/clawd/internal/support/race"
)

// growthRatio fails t if large, given scale times the input of small,
// takes more than 4*scale times as long: linear work grows scale times,
// quadratic work scale*scale times. Each is timed best of three on its
// thread's CPU clock (cputime.Least), and the two are compared with each
// other rather than with a bound, so the check says the same on a fast
// machine and a slow or loaded one. Times under 50 ms are too small to
// compare and pass. Under the race detector, which slows large inputs
// more than small ones, only the times are logged.
func growthRatio(t *testing.T, what string, small, large func(), scale int) {
	t.Helper()
	smallTime, largeTime := cputime.Least(3, small), cputime.Least(3, large)
	t.Logf("%s: %v, %dx the input %v", what, smallTime, scale, largeTime)
	if race.Enabled {
		return
	}
	if largeTime > 50*time.Millisecond && largeTime > time.Duration(4*scale)*smallTime {
		t.Errorf("%s: %v, and %v for %dx the input: more than %dx", what, smallTime, largeTime, scale, 4*scale)
	}
}
