package clawdtest

import (
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Child is a `clawd serve` on stdio, spawned by the test, with a Client on
// its stdin and stdout and its stderr collected.
type Child struct {
	*Client
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stderr *SyncBuffer
	done   chan struct{}
}

// Stdio starts `clawd serve args...` as a child speaking NDJSON on stdio.
func (e *Env) Stdio(args ...string) *Child {
	e.T.Helper()
	return StartChild(e.T, e.Command(append([]string{"serve"}, args...)...))
}

// StartChild starts a prepared command (ExtraFiles, another environment)
// as a Child. The test's cleanup closes its stdin, gives it 10 s to exit,
// then kills it; if the test failed, the child's stderr is logged.
func StartChild(t *testing.T, cmd *exec.Cmd) *Child {
	t.Helper()
	p := &Child{Cmd: cmd, Stderr: &SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.Stderr
	var err error
	if p.Stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	// stdout is a pipe of the test's own, not cmd.StdoutPipe: Wait closes
	// that one, losing lines the reader has not read yet (a killed child's
	// last answers).
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		w.Close()
		stdout.Close()
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	w.Close()
	p.Client = NewClient(t, p.Stdin, stdout)
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Stdin.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
		stdout.Close()
		if t.Failed() {
			t.Logf("%v stderr:\n%s", cmd.Args, p.Stderr)
		}
	})
	return p
}

// Pid is the child's process id.
func (p *Child) Pid() int { return p.Cmd.Process.Pid }

// CloseWait closes the child's stdin (the host ends the session) and waits
// for it to exit, failing the test if it takes over 10 s (it is killed
// then).
func (p *Child) CloseWait() {
	p.t.Helper()
	p.Stdin.Close()
	p.Wait(10 * time.Second)
}

// Wait waits up to within for the child to exit by itself and returns
// its exit code; after that it kills the child and fails the test.
func (p *Child) Wait(within time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		p.Cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("%v did not exit within %v", p.Cmd.Args, within)
	}
	return p.Cmd.ProcessState.ExitCode()
}

// Exited reports whether the child has exited, waiting up to within.
func (p *Child) Exited(within time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(within):
		return false
	}
}
