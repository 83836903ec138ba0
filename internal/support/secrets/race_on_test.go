//go:build race

package secrets

// raceEnabled: the race detector slows large allocations and copies more
// than small ones, which distorts time comparisons between input sizes.
const raceEnabled = true
