//go:build !unix

package clawdtest

import "testing"

// lockFile does not lock here: the npm upstream tests run on unix only.
func lockFile(t testing.TB, path string) (unlock func()) { return func() {} }
