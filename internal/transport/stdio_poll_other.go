//go:build !unix

package transport

import "os"

// pollableStdin leaves stdin as it is on Windows: an anonymous pipe there
// cannot be registered with Go's poller (no overlapped I/O), so reads block
// a thread as before. Only latency differs (docs/benchmarks.md, "Core",
// has the unix version's gain); behaviour is the same.
func pollableStdin() (*os.File, func()) { return os.Stdin, func() {} }

// pollableStdout leaves stdout as it is on Windows, for the same reason:
// writes to it take no deadline, so DefaultWriteStall does not apply there.
func pollableStdout() (*os.File, func()) { return os.Stdout, func() {} }
