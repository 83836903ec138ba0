package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/clawde/clawd/internal/tools"
)

// findShell picks the bash to run (chooseWindowsBash: a bash in PATH, else
// Git Bash, else WSL's launcher) or says what to install. A name other than
// "bash" (tests) is looked up in PATH only.
func findShell(name string) (string, error) {
	inPath, lookErr := exec.LookPath(name)
	if name != "bash" {
		if lookErr != nil {
			return "", tools.Errorf("the bash tool needs %q, which is not in clawd's PATH (%v)", name, lookErr)
		}
		return inPath, nil
	}
	exists := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	b, err := chooseWindowsBash(inPath, os.Getenv, exists)
	if err != nil {
		return "", tools.Errorf("%v", err)
	}
	return b.Path, nil
}

// runCmd runs bash inside a Windows job object, the counterpart of the
// process group on unix: bash is created suspended, put in a job with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, then resumed, so every process it
// starts belongs to the job from its first instruction. At the timeout, on
// cancel, and when bash exits (background children), the whole job is
// terminated. A process started with CREATE_BREAKAWAY_FROM_JOB escapes only
// if the job allowed breakaway, which this one does not. WSL's launcher is
// the exception: the Linux processes it starts run in the WSL VM, outside
// any Windows job (docs/platforms.md). WaitDelay bounds the wait for the
// output pipes once the job is gone.
func runCmd(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, stdout, stderr *capture) (*os.ProcessState, bool, error) {
	job, err := newKillJob()
	if err != nil {
		return nil, false, fmt.Errorf("creating a job object for bash: %w", err)
	}
	defer windows.CloseHandle(job) // KILL_ON_JOB_CLOSE: whatever is left dies here
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = pipeGrace
	if err := cmd.Start(); err != nil {
		return nil, false, err
	}
	if err := assignAndResume(job, uint32(cmd.Process.Pid)); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, false, fmt.Errorf("putting bash in its job object: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case err = <-done:
	case <-timer.C:
		timedOut = true
		windows.TerminateJobObject(job, 1)
		err = <-done
	case <-ctx.Done():
		windows.TerminateJobObject(job, 1)
		err = <-done
	}
	windows.TerminateJobObject(job, 1) // background children left by a normal exit
	if cmd.ProcessState == nil {
		return nil, timedOut, err
	}
	return cmd.ProcessState, timedOut, nil
}

// newKillJob creates an unnamed job object whose processes all die when its
// last handle closes.
func newKillJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// assignAndResume puts the suspended process pid in job and resumes its
// threads (a process created suspended has exactly one). While it is
// suspended and not yet waited for, its pid cannot be reused.
func assignAndResume(job windows.Handle, pid uint32) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		return err
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, rerr := windows.ResumeThread(th)
		windows.CloseHandle(th)
		if rerr != nil {
			return rerr
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("no thread of the new process was found to resume")
	}
	return nil
}

func exitStatus(st *os.ProcessState) int { return st.ExitCode() }
