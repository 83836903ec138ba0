package clawdtest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// RunTimeout bounds every Env.Run: a clawd command that hangs fails its
// test after this long instead of hanging the package until go test's
// own timeout.
const RunTimeout = 60 * time.Second

// Command is `clawd args...` in this environment, run from the workspace.
// The caller runs it; nothing bounds it (see Run, Serve, Stdio).
func (e *Env) Command(args ...string) *exec.Cmd {
	cmd := exec.Command(e.Bin, args...)
	cmd.Env = e.Environ()
	cmd.Dir = e.WS
	return cmd
}

// Run runs clawd to completion with empty stdin and returns stdout, stderr
// and the exit code. It fails the test if clawd cannot be started or runs
// longer than RunTimeout (it is killed then).
func (e *Env) Run(args ...string) (stdout, stderr string, code int) {
	e.T.Helper()
	return e.RunStdin("", args...)
}

// RunStdin is Run with stdin as clawd's standard input.
func (e *Env) RunStdin(stdin string, args ...string) (stdout, stderr string, code int) {
	e.T.Helper()
	return RunCmd(e.T, e.Command(args...), stdin)
}

// RunCmd runs a prepared command like Env.Run does: stdin fed from a
// string, output collected, bounded by RunTimeout.
func RunCmd(t *testing.T, cmd *exec.Cmd, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(RunTimeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not finish within %v\nstdout: %s\nstderr: %s", cmd.Args, RunTimeout, &out, &errb)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// MustRun runs clawd and fails the test unless it exits 0; it returns
// stdout.
func (e *Env) MustRun(args ...string) string {
	e.T.Helper()
	out, errs, code := e.Run(args...)
	if code != 0 {
		e.T.Fatalf("clawd %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

// Init runs `clawd init` (the default config) and returns the config
// file's path.
func (e *Env) Init() string {
	e.T.Helper()
	e.MustRun("init")
	return e.ConfigFile()
}
