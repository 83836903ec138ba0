//go:build unix

package daemon

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseOnExecInherited marks every descriptor above stderr close-on-exec.
// Descriptors clawd opens itself already are; this covers the ones its
// parent leaked into it (an IDE's pipes, a shell's redirections), which
// would otherwise pass on to every bash child: a tool call must not reach
// a file it was not given. Best effort: a failure leaves the descriptor as
// it was.
func CloseOnExecInherited() {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return
	}
	// Before Linux 5.11, and on other systems: walk the descriptor table.
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
				unix.CloseOnExec(fd)
			}
		}
		return
	}
}
