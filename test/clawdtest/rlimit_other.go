//go:build !unix

package clawdtest

import "testing"

// RaiseFDLimit skips the test: the tests that hold thousands of
// connections run where RLIMIT_NOFILE exists.
func RaiseFDLimit(t *testing.T, n uint64) {
	t.Skip("needs RLIMIT_NOFILE")
}
