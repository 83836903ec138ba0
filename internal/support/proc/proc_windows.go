package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// osProc is the Windows side of a Process: the child runs in a job object,
// the counterpart of the process group on unix. It is created suspended,
// put in a job with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, then resumed, so
// every process it starts belongs to the job from its first instruction.
// A process started with CREATE_BREAKAWAY_FROM_JOB escapes only if the job
// allowed breakaway, which this one does not. WSL's launcher is the
// exception: the Linux processes it starts run in the WSL VM, outside any
// Windows job (docs/platforms.md).
type osProc struct {
	cmd  *exec.Cmd
	job  windows.Handle
	done chan struct{} // closed when cmd.Wait returned
	err  error         // cmd.Wait's error

	mu     sync.Mutex
	waited bool // the job handle is closed
}

// Start starts c's program in its own job object (see the package doc for
// what the child gets and what it does not). Output written to Stdout and
// Stderr is copied by os/exec; Cmd.PipeGrace becomes exec's WaitDelay.
func Start(c *Cmd) (*Process, error) {
	cmd, err := c.command()
	if err != nil {
		return nil, err
	}
	name := filepath.Base(c.Path)
	job, err := newKillJob()
	if err != nil {
		return nil, fmt.Errorf("creating a job object for %s: %w", name, err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	cmd.WaitDelay = c.pipeGrace()
	p := &Process{c: c}
	var childEnds, ours []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	fail := func(err error) (*Process, error) {
		closeAll(childEnds)
		closeAll(ours)
		windows.CloseHandle(job)
		return nil, err
	}
	if c.StdinPipe {
		r, w, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		cmd.Stdin, p.stdin = r, w
		childEnds, ours = append(childEnds, r), append(ours, w)
	}
	if c.StdoutPipe {
		r, w, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		cmd.Stdout, p.stdout = w, r
		childEnds, ours = append(childEnds, w), append(ours, r)
	} else if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	}
	if c.Stderr != nil {
		cmd.Stderr = c.Stderr
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	closeAll(childEnds)
	childEnds = nil
	if err := assignAndResume(job, uint32(cmd.Process.Pid)); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fail(fmt.Errorf("putting %s in its job object: %w", name, err))
	}
	o := &osProc{cmd: cmd, job: job, done: make(chan struct{})}
	p.sys = o
	go func() {
		o.err = cmd.Wait()
		close(o.done)
	}()
	return p, nil
}

func (o *osProc) pid() int                { return o.cmd.Process.Pid }
func (o *osProc) exited() <-chan struct{} { return o.done }

// kill terminates every process of the job, unless wait closed it.
func (o *osProc) kill() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.waited {
		windows.TerminateJobObject(o.job, 1)
	}
}

// terminate: Windows has no SIGTERM to send a job's processes; Stop goes
// on to kill.
func (o *osProc) terminate() bool { return false }

// wait: see Process.Wait. exec's Wait has reaped the child and waited up
// to WaitDelay for the output copies; the job is then terminated
// (background children left by a normal exit) and its handle closed
// (KILL_ON_JOB_CLOSE: whatever is left dies there too).
func (o *osProc) wait(time.Duration) (*os.ProcessState, error) {
	<-o.done
	o.mu.Lock()
	windows.TerminateJobObject(o.job, 1)
	windows.CloseHandle(o.job)
	o.waited = true
	o.mu.Unlock()
	if o.cmd.ProcessState == nil {
		err := o.err
		if err == nil {
			err = errors.New("no exit status")
		}
		return nil, err
	}
	return o.cmd.ProcessState, nil
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
