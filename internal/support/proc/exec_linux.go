package proc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// execFD is the descriptor number the program file has in the child.
const execFD = 3

// execFromFile makes cmd run c.ExecFile instead of opening c.Path again.
//
// How: the open file is passed to the child as descriptor 3 (ExtraFiles,
// which the child gets without close-on-exec) and the child execs
// /proc/self/fd/3, a link the kernel resolves to the open file itself, not
// to a path. What runs is therefore the file the caller opened (and
// hashed), whatever has happened to c.Path since: a file renamed over it, a
// deleted and recreated file, a swapped symlink or directory. argv[0] stays
// c.Path.
//
// Why not close-on-exec (execveat(AT_EMPTY_PATH) with an O_CLOEXEC
// descriptor): for a script with a #! line the kernel starts the
// interpreter with the script's name, "/proc/self/fd/3", which the
// interpreter must open after the exec; with close-on-exec that descriptor
// is gone and the exec fails with ENOENT. So the program keeps descriptor 3
// open, read-only, for its lifetime.
//
// Limits:
//   - The check binds the inode, not its bytes: a writer that rewrites the
//     same file in place (it needs write permission on the file itself)
//     between the caller's hash and the exec changes what runs. The kernel
//     refuses to exec a file someone has open for writing (ETXTBSY), so the
//     writer must have finished and closed it before the exec.
//   - A #! script's interpreter is opened by the kernel by path (and
//     `#!/usr/bin/env node` looks node up in PATH): only the script is
//     bound to the descriptor. The script sees "/proc/self/fd/3" as its $0
//     (a shell script that finds its siblings from `dirname "$0"` breaks;
//     name the interpreter and the script in the command instead: both are
//     then pinned). Node resolves its main script's real path and reads it
//     by that path: after a swap that path ends in " (deleted)" or names
//     wherever the approved file was moved, so node fails or runs the
//     approved file, never the new one.
//   - /proc must be mounted; without it the program is not started.
//   - The process's name (/proc/PID/comm, what `top` shows) is "3"; its
//     command line (ps) shows argv[0], c.Path.
func execFromFile(cmd *exec.Cmd, c *Cmd) error {
	if _, err := os.Stat("/proc/self/fd/" + strconv.Itoa(int(c.ExecFile.Fd()))); err != nil {
		return fmt.Errorf("proc: %s can only be started by descriptor, and /proc/self/fd is not available (%v): mount /proc", c.Path, err)
	}
	cmd.Path = "/proc/self/fd/" + strconv.Itoa(execFD)
	cmd.Args[0] = c.Path
	cmd.ExtraFiles = []*os.File{c.ExecFile}
	return nil
}
