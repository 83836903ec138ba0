//go:build unix

package clawdtest

import (
	"os"
	"syscall"
	"testing"
)

// lockFile takes an exclusive flock on path (created if needed), so two
// test processes never run npm install into one prefix at once.
func lockFile(t testing.TB, path string) (unlock func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}
