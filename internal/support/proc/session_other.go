//go:build unix && !linux

package proc

// killSession: without /proc there is no list of a session's processes;
// only the process group is killed (Cmd.NewSession states the limit).
func killSession(sid int) {}
