// Package proc starts and stops the child processes clawd runs: the bash
// tool's shell, and the stdio MCP servers it will front. Every child gets
// the same treatment, so what docs/security.md says about child processes
// holds for all of them:
//
//   - Its own kill scope: on unix a new process group (Setpgid; its id is
//     the child's pid), on Windows a job object the child is put in while
//     still suspended, so everything it starts belongs to the scope from
//     its first instruction. Kill, Stop and Wait end the whole scope, so
//     grandchildren (`cmd &`) die with the child.
//   - A scrubbed environment: clawd's environment minus clawd's own
//     variables (secrets.IsClawdVar: CLAWDE_*, CLAWD_*, any case), plus the
//     caller's Env entries.
//   - stdin from the null device, unless the caller asks for a pipe
//     (StdinPipe: an MCP server reads requests there).
//   - Descriptors 0, 1 and 2 only, as far as Go's exec decides: every
//     descriptor Go opens (files, sockets, pipes of other children) is
//     close-on-exec, and exec passes only stdin, stdout and stderr, plus
//     on Linux, when Cmd.ExecFile is set, descriptor 3: the program's own
//     file, read-only (exec_linux.go says why). A descriptor clawd
//     inherited from its own parent without close-on-exec would pass on;
//     clawd serve marks those
//     close-on-exec at startup (daemon.CloseOnExecInherited), and a program
//     embedding proc must do the same if it cares.
//   - Signal dispositions: the Go runtime resets every signal it catches
//     to its default in the child, and the signal mask is empty. A signal
//     the program ignores (signal.Ignore) stays ignored across exec, in
//     the child and all it starts; clawd serve therefore catches SIGPIPE
//     (signal.Notify) instead of ignoring it, and a program embedding proc
//     must do the same.
//   - Reaping: Wait (which Stop calls) reaps the child, so no zombie is
//     left, and kills what remains of its scope. On Linux a program may
//     also adopt the orphans of its descendants (BecomeSubreaper,
//     ReapAdopted, WatchAdopted; reap_linux.go): Start's children are
//     tracked until Wait reaps them, so adopting never takes their exit
//     status.
//
// Limits, stated once here and at each function:
//
//   - A process that leaves the scope escapes it: on unix setsid(2) or
//     setpgid(2) (`setsid cmd`, `set -m` job control); on Windows a process
//     of WSL's launcher runs in the WSL VM, outside any Windows job. Such a
//     process is not killed, and if it holds the output pipes, Wait stops
//     reading PipeGrace after the scope is gone and returns without the
//     rest of its output.
//   - On unix, a group kill needs the group id to still be the child's.
//     On Linux the group is killed while the child is an unreaped zombie
//     (waitid with WNOWAIT), when its pid, hence the group id, cannot have
//     been reused. Elsewhere the child is reaped first; the group id stays
//     reserved while any member lives, so only an already empty group's id
//     could in principle have been reused by then (a new group with the
//     same number), and kill(2) would reach it.
//   - No resource limits (CPU, memory, files) and no confinement: a child
//     runs with clawd's user's rights.
//   - Graceful stop is a request: SIGTERM may be ignored, and on Windows
//     there is no SIGTERM (Stop goes from closing stdin to terminating the
//     job).
package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/clawde/clawd/internal/support/secrets"
)

// DefaultPipeGrace is how long Wait waits for EOF on the output pipes once
// the child's scope is gone, when Cmd.PipeGrace is zero. Only a process
// that left the scope can still hold them then.
const DefaultPipeGrace = 250 * time.Millisecond

// Cmd says what to start and how. The zero values are the safe ones: stdin
// from the null device, stdout and stderr discarded.
type Cmd struct {
	// Path is the program (an absolute path, or one exec.LookPath found);
	// Args are its arguments, not including the program name.
	Path string
	Args []string
	// Dir is the working directory; "" is clawd's own.
	Dir string
	// Env entries (KEY=value) are added to the scrubbed environment; an
	// entry replaces an inherited variable of the same name (os/exec keeps
	// the last of duplicate names, compared without case on Windows).
	// Naming one of clawd's own variables here is an error: they never
	// reach a child.
	Env []string
	// StdinPipe gives the child a pipe as stdin, whose write end is
	// Process.Stdin; otherwise stdin is the null device.
	StdinPipe bool
	// Stdout and Stderr receive the child's output, read from pipes by
	// proc (a nil writer discards it; see Ring for a bounded stderr). A
	// writer is called from one goroutine per stream, and its Write must
	// not block for long: the child blocks when the pipe is full.
	Stdout, Stderr io.Writer
	// StdoutPipe hands the read end of stdout to the caller
	// (Process.Stdout) instead of reading it into Stdout, which must then
	// be nil. The caller reads it and closes it; Wait does not wait for
	// it.
	StdoutPipe bool
	// PipeGrace overrides DefaultPipeGrace.
	PipeGrace time.Duration
	// NewSession makes the child lead a session of its own (setsid; on
	// unix only), of which its process group is the first: it has no
	// controlling terminal, and Kill (the timeout, a cancel) also ends the
	// processes that moved to another process group of that session
	// (setpgid, `set -m` job control), which a group kill misses. Linux
	// only finds them, by a scan of /proc; elsewhere Kill reaches the
	// group alone. Wait after a normal exit kills the group, not the
	// session. A process that starts a session of its own (setsid)
	// escapes either way.
	NewSession bool
	// ParentDeathKill asks the kernel to SIGKILL the child when clawd dies,
	// even by kill -9 (Linux: PR_SET_PDEATHSIG; ignored elsewhere). Limits:
	// it reaches the child only, not its group (a grandchild survives a
	// killed clawd unless the child forwards the signal, which SIGKILL
	// cannot); it fires when the OS thread that started the child exits,
	// which the Go runtime does only for a goroutine that locked its
	// thread and returned without unlocking, which clawd never does around
	// Start; and it is not inherited across the child's own fork.
	ParentDeathKill bool
	// ExecFile, if set, is Path already opened (read-only) by the caller,
	// typically after hashing it: the child runs this open file, not
	// whatever Path names when the exec happens, so a file renamed over
	// Path, a swapped symlink or a moved directory after the caller's
	// check does not change what runs (see exec_linux.go for how, and
	// what it does not cover). Elsewhere than Linux the program is run by
	// Path, after checking that Path still names the same file as
	// ExecFile (device and inode): a narrower window, not none. proc does
	// not close ExecFile; the caller does, after Start. A Cmd with
	// ExecFile serves one Start.
	ExecFile *os.File

	// execDir is a temporary directory Start made for ExecFile (Linux),
	// removed by Wait or when Start fails.
	execDir string
}

// cleanupExec removes what Start made to run ExecFile.
func (c *Cmd) cleanupExec() {
	if c.execDir != "" {
		os.RemoveAll(c.execDir)
		c.execDir = ""
	}
}

// ErrClawdVar is returned by Start when Cmd.Env names one of clawd's own
// variables.
var ErrClawdVar = errors.New("clawd's own environment variables (CLAWDE_*, CLAWD_*) are never passed to a child")

// env builds the child's environment: clawd's, scrubbed, plus c.Env.
func (c *Cmd) env() ([]string, error) {
	var names []string
	for _, kv := range c.Env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("environment entry %q is not NAME=value", kv)
		}
		if secrets.IsClawdVar(name) {
			return nil, fmt.Errorf("environment variable %s: %w", name, ErrClawdVar)
		}
		names = append(names, name)
	}
	return append(secrets.ScrubEnv(os.Environ(), names...), c.Env...), nil
}

// command checks c and builds the exec.Cmd both platforms' Start begin
// with: the program, its arguments, its directory and the scrubbed
// environment. Start adds what isolates the child on its platform.
func (c *Cmd) command() (*exec.Cmd, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	env, err := c.env()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = env
	if c.ExecFile != nil {
		if err := execFromFile(cmd, c); err != nil {
			return nil, err
		}
	}
	return cmd, nil
}

func (c *Cmd) check() error {
	if c.Path == "" {
		return errors.New("proc: no program to start (Cmd.Path is empty)")
	}
	if c.StdoutPipe && c.Stdout != nil {
		return errors.New("proc: Cmd.StdoutPipe and Cmd.Stdout are both set; choose one")
	}
	return nil
}

func (c *Cmd) pipeGrace() time.Duration {
	if c.PipeGrace > 0 {
		return c.PipeGrace
	}
	return DefaultPipeGrace
}

// Process is a started child and its scope. Its methods are safe for
// concurrent use.
type Process struct {
	c      *Cmd
	sys    *osProc // the platform's part
	stdin  *os.File
	stdout *os.File // StdoutPipe: the caller's read end

	waitOnce  sync.Once
	waitState *os.ProcessState
	waitErr   error
}

// Pid is the child's process id (on unix also its process group id).
func (p *Process) Pid() int { return p.sys.pid() }

// Stdin is the write end of the child's stdin pipe (Cmd.StdinPipe), nil
// otherwise. Closing it is the first step of a graceful stop; Stop and
// Wait close it.
func (p *Process) Stdin() io.WriteCloser {
	if p.stdin == nil {
		return nil
	}
	return p.stdin
}

// Stdout is the read end of the child's stdout (Cmd.StdoutPipe), nil
// otherwise. The caller closes it.
func (p *Process) Stdout() io.ReadCloser {
	if p.stdout == nil {
		return nil
	}
	return p.stdout
}

// Exited is closed once the child itself has exited (its scope may still
// hold other processes until Wait).
func (p *Process) Exited() <-chan struct{} { return p.sys.exited() }

// Kill ends the child's whole scope now (SIGKILL to the process group; on
// Windows, terminating the job). It does not wait; Wait reaps. After Wait
// it does nothing.
func (p *Process) Kill() { p.sys.kill() }

// Wait waits for the child to exit, kills what is left of its scope,
// reaps the child, and waits at most PipeGrace for EOF on the stdout and
// stderr pipes proc reads before it closes them. It returns the child's
// exit state. It may be called more than once and from several goroutines;
// all get the same answer.
func (p *Process) Wait() (*os.ProcessState, error) {
	p.waitOnce.Do(func() {
		p.waitState, p.waitErr = p.sys.wait(p.c.pipeGrace())
		p.c.cleanupExec()
		if p.stdin != nil {
			p.stdin.Close()
		}
	})
	return p.waitState, p.waitErr
}

// Stop ends the child gracefully, then less so: it closes stdin (an MCP
// server exits on EOF), waits up to grace for the child to exit, asks the
// whole scope to terminate (SIGTERM to the group; on Windows there is no
// such request and this step is skipped), waits up to grace again, and
// then kills the scope. It then returns Wait's answer. A child that exits
// at any step ends the sequence there; whatever is left of its scope is
// killed by Wait. Stop takes at most about 2*grace plus PipeGrace.
func (p *Process) Stop(grace time.Duration) (*os.ProcessState, error) {
	if p.stdin != nil {
		p.stdin.Close()
	}
	if !waitFor(p.Exited(), grace) {
		if p.sys.terminate() {
			waitFor(p.Exited(), grace)
		}
		p.Kill()
	}
	return p.Wait()
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
