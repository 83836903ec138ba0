//go:build unix

package transport

import (
	"os"
	"syscall"
)

// pollableStdin returns stdin switched to non-blocking mode, so reads wait
// in Go's network poller instead of a blocked system call. A blocked read
// holds its thread and processor, and the tools/call goroutine it has just
// started must then wait for another thread to be woken to run it, which
// is a large part of a trivial tools/call round trip (docs/benchmarks.md,
// "Core", has the measurement; bench/stdio.sh repeats it). Only pipes and sockets are switched: a
// terminal's mode is shared with the shell, and regular files cannot be
// polled. restore puts the descriptor back in blocking mode for whoever
// shares it after clawd exits.
func pollableStdin() (f *os.File, restore func()) {
	fi, err := os.Stdin.Stat()
	if err != nil {
		return os.Stdin, func() {}
	}
	return pollable(os.Stdin, fi, "/dev/stdin")
}

// pollableStdout returns stdout switched to non-blocking mode when it is a
// pipe or socket, so a write the client does not read can be given a
// deadline (DefaultWriteStall). It is left alone when stderr shares it
// (2>&1): stderr's writes would then fail whenever the pipe is full. It is
// switched regardless when stdin shares it (one socket for both): stdin's
// switch already made it non-blocking. restore puts it back in blocking
// mode.
func pollableStdout() (f *os.File, restore func()) {
	fi, err := os.Stdout.Stat()
	if err != nil {
		return os.Stdout, func() {}
	}
	if ei, err := os.Stderr.Stat(); err == nil && os.SameFile(fi, ei) {
		if ii, err := os.Stdin.Stat(); err != nil || !os.SameFile(fi, ii) {
			return os.Stdout, func() {}
		}
	}
	return pollable(os.Stdout, fi, "/dev/stdout")
}

// pollable switches std (stat'ed as fi) to non-blocking mode and returns
// it as a file in the network poller, when it is a pipe or a socket;
// otherwise, or when the switch fails, std itself. restore puts the
// descriptor back in blocking mode.
func pollable(std *os.File, fi os.FileInfo, name string) (f *os.File, restore func()) {
	if fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return std, func() {}
	}
	fd := int(std.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return std, func() {}
	}
	// NewFile on a non-blocking descriptor registers it with the poller.
	return os.NewFile(uintptr(fd), name), func() { syscall.SetNonblock(fd, false) }
}
