package daemon

// CloseOnExecInherited does nothing on Windows, by design: a handle reaches
// a child process only if it is marked inheritable and the child is created
// with handle inheritance, and Go's os/exec passes the child an explicit
// list of exactly the handles it sets up (PROC_THREAD_ATTRIBUTE_HANDLE_LIST:
// stdin, stdout, stderr). A handle clawd's own parent left inheritable in
// clawd therefore never reaches a bash child (docs/platforms.md).
func CloseOnExecInherited() {}
