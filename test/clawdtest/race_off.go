//go:build !race

package clawdtest

// raceEnabled: this test binary runs under the race detector, so Main
// builds clawd with it too; otherwise a race in the binary the tests
// drive would go unseen.
const raceEnabled = false
