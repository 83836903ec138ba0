//go:build unix

package builtin

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/clawde/clawd/internal/tools"
)

// findShell looks the shell up in PATH.
func findShell(name string) (string, error) {
	shell, err := exec.LookPath(name)
	if err != nil {
		return "", tools.Errorf("the bash tool needs %q, which is not installed or not in clawd's PATH (%v); install bash or add it to PATH and restart clawd", name, err)
	}
	return shell, nil
}

// runCmd runs cmd in its own process group with stdout and stderr on pipes
// read into the captures, and returns once the command is done and nothing
// of it is left running.
//
// The whole group gets SIGKILL at the timeout, on ctx cancel, and also when
// bash exits normally: a background child (`sleep 100 &`) would otherwise
// outlive the call and keep the output pipes open, so the call would hang
// until it exited. On Linux the kill happens while bash is still an unreaped
// zombie (waitid WNOWAIT), so its pid, which is the group id, cannot have
// been reused by an unrelated process group.
//
// A process that left the group (setsid, `set -m` job control) is beyond a
// group kill; if it still holds a pipe, reading stops pipeGrace after the
// group is gone and the call returns without its remaining output.
func runCmd(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, stdout, stderr *capture) (*os.ProcessState, bool, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, false, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, false, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	// The child has its copies; ours must close or EOF never comes.
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, false, err
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go drain(outR, stdout, &readers)
	go drain(errR, stderr, &readers)

	pid := cmd.Process.Pid
	exited := make(chan struct{})
	reaped := false
	var waitErr error
	go func() {
		if !waitNoReap(pid) {
			waitErr = cmd.Wait()
			reaped = true
		}
		close(exited)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-exited:
	case <-timer.C:
		timedOut = true
		killGroup(pid)
		<-exited
	case <-ctx.Done():
		killGroup(pid)
		<-exited
	}
	killGroup(pid) // background children left behind by a normal exit
	if !reaped {
		waitErr = cmd.Wait()
	}

	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	grace := time.NewTimer(pipeGrace)
	select {
	case <-done:
	case <-grace.C:
		for _, r := range []*os.File{outR, errR} {
			if r.SetReadDeadline(time.Now()) != nil {
				r.Close()
			}
		}
		<-done
	}
	grace.Stop()
	outR.Close()
	errR.Close()

	if cmd.ProcessState == nil {
		if waitErr == nil {
			waitErr = errors.New("no exit status")
		}
		return nil, timedOut, waitErr
	}
	return cmd.ProcessState, timedOut, nil
}

func drain(r *os.File, c *capture, wg *sync.WaitGroup) {
	defer wg.Done()
	buf := make([]byte, 16<<10)
	for {
		n, err := r.Read(buf)
		c.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// killGroup sends SIGKILL to every process of the group; ESRCH (nothing
// left) is the normal answer after a clean exit.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// exitStatus is the shell convention: the exit code, or 128+signal for a
// process killed by a signal.
func exitStatus(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}
