package clawdtest

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SyncBuffer is a goroutine-safe buffer: a daemon's stderr that tests poll
// while the daemon writes.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Daemon is a `clawd serve` running in the background of a test.
type Daemon struct {
	t      *testing.T
	Cmd    *exec.Cmd
	Stderr *SyncBuffer
	done   chan struct{}
	err    error
}

// StartDaemon starts cmd (a `clawd serve ...`) with its stderr captured;
// the test's cleanup stops it with SIGTERM and fails the test if it does
// not stop.
func StartDaemon(t *testing.T, cmd *exec.Cmd) *Daemon {
	t.Helper()
	d := &Daemon{t: t, Cmd: cmd, Stderr: &SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = d.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = cmd.Wait(); close(d.done) }()
	t.Cleanup(d.Stop)
	return d
}

// ServeDaemon is StartDaemon that also waits until clawd says it serves.
func ServeDaemon(t *testing.T, cmd *exec.Cmd) *Daemon {
	t.Helper()
	d := StartDaemon(t, cmd)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(d.Stderr.String(), "clawd: serving MCP on") {
		select {
		case <-d.done:
			t.Fatalf("%v exited: %v\n%s", cmd.Args, d.err, d.Stderr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v did not start:\n%s", cmd.Args, d.Stderr)
		}
	}
	return d
}

// Stop ends the daemon with SIGTERM (a clean shutdown) and waits. Where
// SIGTERM cannot be sent (Windows has no signals to send to another
// process), it kills the daemon instead, as Kill does.
func (d *Daemon) Stop() {
	select {
	case <-d.done:
		return
	default:
	}
	if err := d.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		d.Kill()
		return
	}
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		d.Cmd.Process.Kill()
		<-d.done
		d.t.Errorf("clawd serve did not stop on SIGTERM:\n%s", d.Stderr)
	}
}

// Kill ends the daemon with SIGKILL: no cleanup runs.
func (d *Daemon) Kill() {
	d.Cmd.Process.Kill()
	<-d.done
}

// Exited waits up to within for the daemon to exit by itself and returns
// its exit code.
func (d *Daemon) Exited(within time.Duration) (int, bool) {
	select {
	case <-d.done:
		return d.Cmd.ProcessState.ExitCode(), true
	case <-time.After(within):
		return 0, false
	}
}
