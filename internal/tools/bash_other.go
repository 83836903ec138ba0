//go:build !unix

package tools

import (
	"context"
	"os"
	"os/exec"
	"time"
)

// runCmd without process groups (Windows): the timeout and cancel kill bash
// itself; children it started may survive, and WaitDelay bounds how long the
// call waits for them to release the output pipes. See docs/tools.md.
func runCmd(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, stdout, stderr *capture) (*os.ProcessState, bool, error) {
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = pipeGrace
	if err := cmd.Start(); err != nil {
		return nil, false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		timedOut = true
		cmd.Process.Kill()
		err = <-done
	case <-ctx.Done():
		cmd.Process.Kill()
		err = <-done
	}
	if cmd.ProcessState == nil {
		return nil, timedOut, err
	}
	return cmd.ProcessState, timedOut, nil
}

func exitStatus(st *os.ProcessState) int { return st.ExitCode() }
