//go:build !unix

package transport

import "testing"

// raiseFDLimit: the tests that hold thousands of connections run where
// RLIMIT_NOFILE exists.
func raiseFDLimit(t *testing.T, n uint64) {
	t.Skip("needs RLIMIT_NOFILE")
}
