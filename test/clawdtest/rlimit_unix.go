//go:build unix

package clawdtest

import (
	"syscall"
	"testing"
)

// RaiseFDLimit lets the test process hold n descriptors, or skips the test
// when the hard limit does not allow it. A clawd started afterwards
// inherits the limit (and, as a Go program, raises its own soft limit to the
// hard one anyway).
func RaiseFDLimit(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	if uint64(lim.Cur) >= n {
		return
	}
	if uint64(lim.Max) < n {
		t.Skipf("RLIMIT_NOFILE hard limit %d < %d", lim.Max, n)
	}
	setLimit(&lim.Cur, n)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
}

// setLimit stores n in an Rlimit field, which is uint64 on Linux and macOS
// and int64 on the BSDs.
func setLimit[T int64 | uint64](field *T, n uint64) { *field = T(n) }
