//go:build unix

package daemon

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// A descriptor inherited without close-on-exec is marked by each of the
// three ways CloseOnExecInherited may take (close_range on Linux, the
// listing on macOS, the scan where nothing can be listed), and stdio is
// left alone.
func TestCloseOnExecInherited(t *testing.T) {
	for name, mark := range map[string]func(){
		"CloseOnExecInherited": CloseOnExecInherited,
		"listing":              func() { markListed() },
		"scan":                 markScan,
	} {
		t.Run(name, func(t *testing.T) { testMarks(t, mark) })
	}
}

func testMarks(t *testing.T, mark func()) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	stdio := make([]int, 3)
	for i := range stdio {
		stdio[i], _ = unix.FcntlInt(uintptr(i), unix.F_GETFD, 0)
	}
	mark()
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("descriptor %d is still inherited across exec", fd)
	}
	for i := range stdio {
		if got, _ := unix.FcntlInt(uintptr(i), unix.F_GETFD, 0); got != stdio[i] {
			t.Errorf("descriptor %d's flags changed from %#x to %#x", i, stdio[i], got)
		}
	}
}
