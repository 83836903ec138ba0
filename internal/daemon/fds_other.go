//go:build !unix

package daemon

// CloseOnExecInherited does nothing where there is no fork/exec.
func CloseOnExecInherited() {}
