//go:build !linux

package proc

import (
	"fmt"
	"os"
	"os/exec"
)

// execFromFile: outside Linux there is no portable way to execute an open
// file (macOS has no fexecve; Windows creates processes from a path), so
// the program is run by path after checking that c.Path still names the
// file the caller opened (same device and inode, or file index on
// Windows). A swap between this check and the exec, microseconds later,
// is not seen: hash-then-exec, with the window narrowed, not closed.
func execFromFile(cmd *exec.Cmd, c *Cmd) error {
	opened, err := c.ExecFile.Stat()
	if err != nil {
		return fmt.Errorf("proc: %s: %v", c.Path, err)
	}
	now, err := os.Stat(c.Path)
	if err != nil {
		return fmt.Errorf("proc: %s changed since it was checked (%v); not started", c.Path, err)
	}
	if !os.SameFile(opened, now) {
		return fmt.Errorf("proc: %s was replaced since it was checked; not started", c.Path)
	}
	return nil
}

// SweepExecDirs does nothing: only Linux makes link directories.
func SweepExecDirs() (int, error) { return 0, nil }
