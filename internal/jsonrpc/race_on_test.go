//go:build race

package jsonrpc

// raceSlowdown scales time bounds in tests: the race detector makes
// memory-heavy code several times slower.
const raceSlowdown = 10
