package clawdtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
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

// Serve starts `clawd serve args...` in the background and waits until it
// says it serves (see ServeDaemon); the test's cleanup stops it.
func (e *Env) Serve(args ...string) *Daemon {
	e.T.Helper()
	return ServeDaemon(e.T, e.Command(append([]string{"serve"}, args...)...))
}

// State is a daemon's state file: how the CLI client finds it.
type State struct {
	PID       int    `json:"pid"`
	Transport string `json:"transport"`
	Addr      string `json:"addr"`
	Socket    string `json:"socket"`
	TokenFile string `json:"token_file"`
}

// StateFile is the path of the workspace's state file for kind ("tcp" or
// "unix").
func (e *Env) StateFile(kind string) string {
	return filepath.Join(e.DataDir(), "run", e.WorkspaceID()+"."+kind+".json")
}

// State reads the workspace's state file for kind ("tcp" or "unix"),
// failing the test if there is none.
func (e *Env) State(kind string) State {
	e.T.Helper()
	b, err := os.ReadFile(e.StateFile(kind))
	if err != nil {
		e.T.Fatalf("state file: %v", err)
	}
	var st State
	if err := json.Unmarshal(b, &st, json.RejectUnknownMembers(false)); err != nil {
		e.T.Fatalf("state file %s: %v", b, err)
	}
	return st
}

// Daemon starts `clawd serve --transport transport args...` (transport is
// "unix_socket" or "tcp_loopback"), waits until it serves and its state
// file names its pid (at most 15 s), and returns both.
func (e *Env) Daemon(transport string, args ...string) (*Daemon, State) {
	e.T.Helper()
	d := e.Serve(append([]string{"--transport", transport}, args...)...)
	kind := map[string]string{"unix_socket": "unix", "tcp_loopback": "tcp"}[transport]
	if kind == "" {
		e.T.Fatalf("Env.Daemon: unknown transport %q", transport)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if b, err := os.ReadFile(e.StateFile(kind)); err == nil {
			var st State
			if json.Unmarshal(b, &st, json.RejectUnknownMembers(false)) == nil && st.PID == d.Cmd.Process.Pid {
				return d, st
			}
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("no state file of pid %d at %s:\n%s", d.Cmd.Process.Pid, e.StateFile(kind), d.Stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
