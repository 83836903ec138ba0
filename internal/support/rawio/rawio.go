// Package rawio reads and writes the descriptors on a call's hot path
// (clawd's stdin and stdout, a stdio upstream's pipes, the decision
// journal) without telling the Go scheduler that a system call began.
//
// Why: the first system call a goroutine makes through the syscall package
// after every processor went idle wakes the runtime's monitor thread
// (sysmon), which then polls every 20 us until the process is idle again.
// A proxied tools/call goes idle twice (waiting for its request and for the
// upstream's answer), so the monitor was woken twice per call, on the
// call's path, and its polling took a processor from the client and the
// upstream on 2-core machines (docs/benchmarks.md, "The monitor thread").
// A raw system call does not wake it.
//
// Limits: a raw system call holds its processor (and every stop-the-world
// pause of the garbage collector) until it returns, so this package only
// makes calls that do not wait:
//   - reads and writes of descriptors New found in non-blocking mode; a
//     would-block answer parks the goroutine in the network poller, as
//     os.File does, deadlines included. On Linux they are made with
//     RWF_NOWAIT, so they cannot wait even if something sharing the
//     descriptor switches it back to blocking mode; where the flag is
//     refused (a pipe before Linux 6.4, macOS, the BSDs) the mode is looked
//     at before each call, and a blocking descriptor gets os.File's call.
//   - appends to a regular file LocalDisk accepts (Append): a buffered
//     write there waits for no server, though it can wait for memory or
//     the kernel's throttling of dirty pages.
//
// Errors are os.File's: when the poller reports one (a deadline, a closed
// file) the os.File call is made instead, so callers see
// os.ErrDeadlineExceeded and os.ErrClosed as before.
package rawio
