//go:build unix

package daemon

import (
	"os"

	"golang.org/x/sys/unix"
)

// CloseOnExecInherited marks every descriptor above stderr close-on-exec.
// Descriptors clawd opens itself already are; this covers the ones its
// parent leaked into it (an IDE's pipes, a shell's redirections), which
// would otherwise pass on to every bash child: a tool call must not reach
// a file it was not given.
//
// How, per system (docs/platforms.md):
//   - Linux 5.11 and later: one close_range(3, ~0, CLOSE_RANGE_CLOEXEC).
//   - Otherwise (macOS, older Linux, the BSDs): the open descriptors are
//     listed from /proc/self/fd, else /dev/fd (macOS's devfs lists exactly
//     the process's open descriptors there), and each is marked.
//   - If neither can be listed: descriptors 3 up to the soft RLIMIT_NOFILE,
//     at most maxScanFD, are marked one by one.
//
// Best effort: a failure leaves that descriptor as it was.
func CloseOnExecInherited() {
	if closeRangeCloexec() || markListed() {
		return
	}
	markScan()
}

// markListed marks each descriptor above stderr that /proc/self/fd or
// /dev/fd lists; false if neither can be read.
func markListed() bool {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		names, err := listDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range inheritedFromListing(names) {
			unix.CloseOnExec(fd)
		}
		return true
	}
	return false
}

// markScan marks descriptors 3 up to the soft RLIMIT_NOFILE (at most
// maxScanFD) one by one; a number not in use just answers EBADF.
func markScan() {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		lim.Cur = 1024
	}
	for fd := 3; fd < scanLimit(uint64(lim.Cur)); fd++ { // int64 on the BSDs
		unix.CloseOnExec(fd)
	}
}

func listDir(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
