//go:build unix

package proc

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// osProc is the unix side of a Process: the child leads its own process
// group, whose id is its pid.
type osProc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the child has exited (Linux: still a zombie)

	// mu orders group kills against the reaping in wait: once the child is
	// reaped by wait, its pid may be reused and no kill is sent.
	mu      sync.Mutex
	waited  bool
	reaped  bool  // the exit goroutine reaped already (no waitid WNOWAIT)
	reapErr error // its cmd.Wait error
	session bool  // Cmd.NewSession: kill reaches the whole session

	outR, errR *os.File // pipes proc reads, nil when not used
	readers    sync.WaitGroup
}

// Start starts c's program in its own process group (see the package doc
// for what the child gets and what it does not).
func Start(c *Cmd) (*Process, error) {
	cmd, err := c.command()
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			c.cleanupExec()
		}
	}()
	// setsid makes the child its group's leader too; setpgid after it
	// would fail (EPERM).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !c.NewSession, Setsid: c.NewSession}
	if c.ParentDeathKill {
		setParentDeathKill(cmd.SysProcAttr)
	}

	p := &Process{c: c}
	o := &osProc{cmd: cmd, done: make(chan struct{}), session: c.NewSession}
	p.sys = o
	// childEnds are the child's copies, closed here once it has them (or
	// on failure); ours are closed on failure only.
	var childEnds, ours []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			closeAll(childEnds)
			closeAll(ours)
		}
		return r, w, err
	}
	if c.StdinPipe {
		r, w, err := pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdin, p.stdin = r, w
		childEnds, ours = append(childEnds, r), append(ours, w)
	}
	if c.StdoutPipe || c.Stdout != nil {
		r, w, err := pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdout = w
		if c.StdoutPipe {
			p.stdout = r
		} else {
			o.outR = r
		}
		childEnds, ours = append(childEnds, w), append(ours, r)
	}
	if c.Stderr != nil {
		r, w, err := pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stderr, o.errR = w, r
		childEnds, ours = append(childEnds, w), append(ours, r)
	}
	// Held from fork until the pid is tracked: an adoption scan
	// (ReapAdopted) never takes this child for an orphan.
	startLock()
	err = cmd.Start()
	if err == nil {
		track(cmd.Process.Pid)
	}
	startUnlock()
	// The child has its copies; ours must close or EOF never comes.
	closeAll(childEnds)
	if err != nil {
		closeAll(ours)
		return nil, err
	}
	if o.outR != nil {
		o.readers.Add(1)
		go drain(o.outR, c.Stdout, &o.readers)
	}
	if o.errR != nil {
		o.readers.Add(1)
		go drain(o.errR, c.Stderr, &o.readers)
	}
	pid := cmd.Process.Pid
	go func() {
		if !waitNoReap(pid) {
			err := cmd.Wait()
			untrack(pid)
			o.mu.Lock()
			o.reaped, o.reapErr = true, err
			o.mu.Unlock()
		}
		close(o.done)
	}()
	started = true
	return p, nil
}

func (o *osProc) pid() int                { return o.cmd.Process.Pid }
func (o *osProc) exited() <-chan struct{} { return o.done }

// kill ends the group and, for a Cmd.NewSession child, the rest of its
// session: only while the child is not reaped (its pid, the session's id,
// cannot name another session then).
func (o *osProc) kill() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.waited {
		return
	}
	pid := o.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if o.session && !o.reaped {
		killSession(pid)
	}
}

func (o *osProc) terminate() bool {
	o.signalGroup(syscall.SIGTERM)
	return true
}

// signalGroup signals every process of the group, unless wait has reaped
// the child. ESRCH (nothing left) is the normal answer after a clean exit.
func (o *osProc) signalGroup(sig syscall.Signal) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.waited {
		_ = syscall.Kill(-o.cmd.Process.Pid, sig)
	}
}

// wait: see Process.Wait. On Linux the group is killed while the child is
// still an unreaped zombie, then it is reaped; elsewhere it was reaped by
// the exit goroutine and the group (if any member is left, its id is still
// reserved) is killed after.
func (o *osProc) wait(grace time.Duration) (*os.ProcessState, error) {
	<-o.done
	o.mu.Lock()
	_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL) // background children left behind
	waitErr := o.reapErr
	if !o.reaped {
		waitErr = o.cmd.Wait()
		untrack(o.cmd.Process.Pid)
		o.reaped = true
	}
	o.waited = true
	o.mu.Unlock()

	done := make(chan struct{})
	go func() { o.readers.Wait(); close(done) }()
	t := time.NewTimer(grace)
	select {
	case <-done:
	case <-t.C:
		// Only a process that left the group can still hold the pipes.
		for _, r := range []*os.File{o.outR, o.errR} {
			if r != nil && r.SetReadDeadline(time.Now()) != nil {
				r.Close()
			}
		}
		<-done
	}
	t.Stop()
	for _, r := range []*os.File{o.outR, o.errR} {
		if r != nil {
			r.Close()
		}
	}

	if o.cmd.ProcessState == nil {
		if waitErr == nil {
			waitErr = errors.New("no exit status")
		}
		return nil, waitErr
	}
	return o.cmd.ProcessState, nil
}

// drain copies r into w until EOF or error, ignoring w's errors so the
// child never blocks on a full pipe.
func drain(r *os.File, w io.Writer, wg *sync.WaitGroup) {
	defer wg.Done()
	buf := make([]byte, 16<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}
