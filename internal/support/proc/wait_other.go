//go:build unix && !linux

package proc

// waitNoReap is Linux-only (waitid with WNOWAIT); elsewhere the child is
// reaped first and its process group killed after (see the package doc).
func waitNoReap(pid int) bool { return false }
