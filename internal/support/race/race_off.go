//go:build !race

package race

// Enabled reports whether the race detector is on.
const Enabled = false

// Slowdown scales time bounds in tests: the race detector makes
// memory-heavy code several times slower.
const Slowdown = 1
