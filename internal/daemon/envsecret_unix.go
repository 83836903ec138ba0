//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/support/secrets"
)

// envFDVar names the descriptor on which a re-executed clawd serve finds
// the variables taken out of its environment. It carries only a number.
const envFDVar = "CLAWD_INTERNAL_ENV_FD"

// maxHiddenEnv bounds what goes through the pipe: it is written before the
// exec, with nobody reading yet, so it must fit in the pipe's buffer.
const maxHiddenEnv = 16 << 10

// HideEnvSecrets keeps clawd's own environment variables (CLAWDE_* and
// CLAWD_*: CLAWDE_SESSION_SECRET, a CLAWD_TOKEN the user exported) out of
// reach of the processes clawd serve starts.
//
// os.Unsetenv is not enough: it edits Go's copy of the environment, while
// /proc/<pid>/environ shows the block the kernel set up at exec, which any
// process of the same user (a bash tool call) can read. So when such a
// variable is set, clawd serve writes them into a pipe, re-executes itself
// (same pid, same descriptors: a stdio host keeps its pipes) with an
// environment without them and the pipe's read end inherited, and the new
// image reads them back into Go's environment first thing. The kernel's
// copy then never holds them; Go's copy has them for the code that reads
// them (token.TakeEnvSecret), and bash's environment drops them anyway.
//
// It must run before anything else reads the environment or starts a
// process. It returns only in the image that is to run (or with an error);
// a successful exec does not return.
func HideEnvSecrets() error {
	if v, ok := os.LookupEnv(envFDVar); ok {
		os.Unsetenv(envFDVar)
		return restoreEnv(v)
	}
	var hidden, keep []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if secrets.IsClawdVar(name) {
			hidden = append(hidden, kv)
		} else {
			keep = append(keep, kv)
		}
	}
	if len(hidden) == 0 {
		return nil
	}
	payload := strings.Join(hidden, "\x00")
	if len(payload) > maxHiddenEnv {
		return fmt.Errorf("the CLAWDE_*/CLAWD_* environment variables hold %d bytes, more than the %d clawd serve can move out of its environment; unset the ones clawd does not need", len(payload), maxHiddenEnv)
	}
	exe, err := selfExe()
	if err != nil {
		return fmt.Errorf("re-executing clawd without its secret environment variables: %w", err)
	}
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		return fmt.Errorf("re-executing clawd without its secret environment variables: pipe: %w", err)
	}
	unix.CloseOnExec(p[1])
	if err := writeAll(p[1], []byte(payload)); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return fmt.Errorf("re-executing clawd without its secret environment variables: %w", err)
	}
	unix.Close(p[1]) // the reader sees EOF after the payload
	// The read end must survive the exec: clear close-on-exec on it.
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETFD, 0); err != nil {
		unix.Close(p[0])
		return fmt.Errorf("re-executing clawd without its secret environment variables: %w", err)
	}
	env := append(keep, envFDVar+"="+strconv.Itoa(p[0]))
	err = syscall.Exec(exe, os.Args, env)
	unix.Close(p[0])
	return fmt.Errorf("re-executing %s without its secret environment variables: %w (unset CLAWDE_*/CLAWD_* variables and pass the session secret in %s instead)", exe, err, "the data directory's session.secret")
}

// selfExe is the running binary: /proc/self/exe on Linux (valid even if
// the file was replaced or removed since), else os.Executable.
func selfExe() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

func writeAll(fd int, b []byte) error {
	if err := unix.SetNonblock(fd, true); err != nil {
		return err
	}
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("writing to the pipe: %w", err)
		}
		b = b[n:]
	}
	return nil
}

// restoreEnv reads the hidden variables back from the descriptor named by
// envFDVar. Only a pipe above stderr is accepted: a value set by hand must
// not make clawd read its stdin or a file.
func restoreEnv(v string) error {
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return fmt.Errorf("%s=%q: not a descriptor clawd passed itself; unset it", envFDVar, v)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return fmt.Errorf("%s=%q: not a pipe clawd passed itself; unset it", envFDVar, v)
	}
	unix.CloseOnExec(fd)
	defer unix.Close(fd)
	b, err := readWritten(fd)
	if errors.Is(err, errPipeOpen) {
		return fmt.Errorf("%s=%q: not a pipe clawd passed itself (%v); unset it", envFDVar, v, err)
	}
	if err != nil {
		return fmt.Errorf("reading the environment passed across the re-exec: %w", err)
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if name, val, ok := strings.Cut(kv, "="); ok && secrets.IsClawdVar(name) {
			os.Setenv(name, val)
		}
	}
	return nil
}

// errPipeOpen is readWritten's error for a pipe that has no end of file yet.
var errPipeOpen = errors.New("its writer is still open")

// readWritten reads the pipe fd to its end of file without waiting: the
// payload was written whole and the write end closed before the exec, so
// everything, the end of file included, is there at once. A pipe that would
// make a read wait belongs to a writer still running, not to clawd, and is
// refused instead of read until that writer ends (clawd serve hung there).
// Polling leaves the pipe's flags alone: its other holders share them.
func readWritten(fd int) ([]byte, error) {
	var b []byte
	buf := make([]byte, 4096)
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errPipeOpen
		}
		k, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if k == 0 {
			return b, nil
		}
		if b = append(b, buf[:k]...); len(b) > maxHiddenEnv {
			return nil, errors.New("the environment passed across the re-exec is too large")
		}
	}
}
