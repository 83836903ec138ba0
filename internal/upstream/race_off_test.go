//go:build !race

package upstream

// raceSlowdown scales time bounds in tests: the race detector makes
// memory-heavy code several times slower.
const raceSlowdown = 1

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
