package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// execDirPrefix starts the name of the temporary directory of each
// program started by descriptor: clawd-exec-<clawd's pid>-<random>.
const execDirPrefix = "clawd-exec-"

// execDirMinAge: SweepExecDirs leaves younger directories alone, so a
// program another clawd is starting right now keeps its link.
const execDirMinAge = time.Minute

// SweepExecDirs removes the link directories (execFromFile) that a clawd
// killed before it could wait for its programs left in the temporary
// directory: those of this user whose clawd (the pid in the name) no longer
// runs, older than a minute, holding nothing but the one link. It returns
// how many it removed. Limit: a directory whose clawd's pid was reused by
// a live process stays until a later sweep.
func SweepExecDirs() (int, error) {
	tmp := os.TempDir()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return 0, err
	}
	uid, self := os.Getuid(), os.Getpid()
	removed := 0
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), execDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == self {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || err == syscall.EPERM {
			continue // its clawd (or a process now holding its pid) runs
		}
		dir := filepath.Join(tmp, e.Name())
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < execDirMinAge {
			continue
		} else if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
			continue
		}
		inside, err := os.ReadDir(dir)
		if err != nil || len(inside) > 1 || (len(inside) == 1 && inside[0].Type() != os.ModeSymlink) {
			continue // not what execFromFile leaves: not ours to remove
		}
		if os.RemoveAll(dir) == nil {
			removed++
		}
	}
	return removed, nil
}

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
// interpreter with the script's name, a path to /proc/self/fd/3, which the
// interpreter must open after the exec; with close-on-exec that descriptor
// is gone by then (fexecve(3): such an exec fails with ENOENT). So the
// program keeps descriptor 3 open, read-only, for its lifetime.
//
// Limits:
//   - The check binds the inode, not its bytes: a writer that rewrites the
//     same file in place (it needs write permission on the file itself)
//     between the caller's hash and the exec changes what runs. The kernel
//     refuses to exec a file someone has open for writing (ETXTBSY), so the
//     writer must have finished and closed it before the exec.
//   - A #! script's interpreter is opened by the kernel by path (and
//     `#!/usr/bin/env node` looks node up in PATH): only the script is
//     bound to the descriptor. The kernel is given a symbolic link named
//     like the program, in a private temporary directory, that points to
//     /proc/self/fd/3, so the script's $0 is that link: `${0##*/}` is the
//     program's name (version-manager shims work), but a shell script that
//     finds its siblings from `dirname "$0"` breaks (name the interpreter
//     and the script in the command instead: both are then pinned). The
//     directory is removed when the process is waited for. The link's
//     directory is clawd's, mode 0700: only a process of clawd's own user
//     could replace the link, and such a process can do anything clawd
//     can. Node resolves its main script's real path and reads it by that
//     path: after a swap that path ends in " (deleted)" or names wherever
//     the approved file was moved, so node fails or runs the approved
//     file, never the new one.
//   - /proc must be mounted; without it the program is not started.
func execFromFile(cmd *exec.Cmd, c *Cmd) error {
	if _, err := os.Stat("/proc/self/fd/" + strconv.Itoa(int(c.ExecFile.Fd()))); err != nil {
		return fmt.Errorf("proc: %s can only be started by descriptor, and /proc/self/fd is not available (%v): mount /proc", c.Path, err)
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(execFD)
	cmd.Path = fdPath
	// A link named like the program, to the descriptor: what the kernel
	// executes is still descriptor 3 (the link is followed in the child),
	// but a #! script's $0 and the process's name end in the program's
	// own name. Version-manager shims (pyenv, rbenv, asdf) pick the real
	// program from `${0##*/}` and would otherwise look for one named "3".
	// Without a temporary directory, the bare /proc path is used.
	if dir, err := os.MkdirTemp("", execDirPrefix+strconv.Itoa(os.Getpid())+"-"); err == nil {
		link := filepath.Join(dir, filepath.Base(c.Path))
		if os.Symlink(fdPath, link) == nil {
			cmd.Path, c.execDir = link, dir
		} else {
			os.RemoveAll(dir)
		}
	}
	cmd.Args[0] = c.Path
	cmd.ExtraFiles = []*os.File{c.ExecFile}
	return nil
}
