//go:build unix

package proc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuf is a bytes.Buffer safe to read while proc writes to it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed", name)
	}
	return p
}

func start(t *testing.T, c *Cmd) *Process {
	t.Helper()
	p, err := Start(c)
	if err != nil {
		t.Fatalf("Start(%s %q): %v", c.Path, c.Args, err)
	}
	t.Cleanup(func() { p.Kill(); p.Wait() })
	return p
}

func shell(t *testing.T, script string) *Cmd {
	return &Cmd{Path: lookPath(t, "sh"), Args: []string{"-c", script}}
}

// groupAlive reports whether a live process of group pgid remains, 10 s
// after the call at most: SIGKILL is delivered asynchronously, and the
// zombie of a killed grandchild is reaped by its new parent (init or a
// subreaper), not by proc. A zombie is dead; with /proc it does not count.
// Without proc's group kill, the sleeps of the tests live on and this
// stays true.
func groupAlive(pgid int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		alive := syscall.Kill(-pgid, 0) == nil
		if alive && procWorks() {
			alive = false
			for _, pid := range groupMembers(nil, pgid) {
				if f := procStat(pid); len(f) > 0 && f[0] != "Z" && f[0] != "X" {
					alive = true
				}
			}
		}
		if !alive || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func procWorks() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// notReapable reports whether pid is no longer a child this process could
// reap: Wait left no zombie behind.
func notReapable(t *testing.T, pid int) {
	t.Helper()
	var ws syscall.WaitStatus
	got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	if !errors.Is(err, syscall.ECHILD) {
		t.Errorf("wait4(%d) after Wait = %d, %v; want ECHILD (the child was not reaped)", pid, got, err)
	}
}

func TestEnvironmentScrubbed(t *testing.T) {
	t.Setenv("CLAWDE_SESSION_SECRET", "s3cret-session")
	t.Setenv("CLAWD_TOKEN", "tok-123")
	t.Setenv("clawd_lower", "lower-secret")
	t.Setenv("CLAWDEX_KEEP", "kept-1")
	t.Setenv("PROC_TEST_REPLACED", "old")
	var out syncBuf
	c := &Cmd{Path: lookPath(t, "env"), Stdout: &out, Env: []string{"PROC_TEST_REPLACED=new", "PROC_TEST_ADDED=x=y"}}
	p := start(t, c)
	if st, err := p.Wait(); err != nil || st.ExitCode() != 0 {
		t.Fatalf("Wait: %v %v", st, err)
	}
	env := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, s := range []string{"s3cret-session", "tok-123", "lower-secret", "PROC_TEST_REPLACED=old"} {
		if strings.Contains(out.String(), s) {
			t.Errorf("child environment contains %q", s)
		}
	}
	for _, s := range []string{"CLAWDEX_KEEP=kept-1", "PROC_TEST_REPLACED=new", "PROC_TEST_ADDED=x=y"} {
		if !slices.Contains(env, s) {
			t.Errorf("child environment lacks %q", s)
		}
	}

	for _, bad := range []string{"CLAWD_TOKEN=x", "clawde_anything=1"} {
		_, err := Start(&Cmd{Path: lookPath(t, "true"), Env: []string{bad}})
		if !errors.Is(err, ErrClawdVar) {
			t.Errorf("Env %q: %v, want ErrClawdVar", bad, err)
		}
	}
	for _, bad := range []string{"NOEQUALS", "=x"} {
		if _, err := Start(&Cmd{Path: lookPath(t, "true"), Env: []string{bad}}); err == nil || !strings.Contains(err.Error(), "NAME=value") {
			t.Errorf("Env %q: %v, want an error naming the expected form", bad, err)
		}
	}
	if _, err := Start(&Cmd{}); err == nil || !strings.Contains(err.Error(), "Cmd.Path") {
		t.Errorf("empty Cmd: %v", err)
	}
	if _, err := Start(&Cmd{Path: "/bin/true", StdoutPipe: true, Stdout: &out}); err == nil {
		t.Error("StdoutPipe with Stdout: no error")
	}
}

// stdin is the null device by default: a reader sees EOF at once.
func TestStdinIsNull(t *testing.T) {
	var out syncBuf
	c := shell(t, "cat; echo end")
	c.Stdout = &out
	p := start(t, c)
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("cat is still reading stdin")
	}
	p.Wait()
	if out.String() != "end\n" {
		t.Errorf("stdout %q", out.String())
	}
	if p.Stdin() != nil || p.Stdout() != nil {
		t.Error("pipes handed out that were not asked for")
	}
}

// With pipes, the caller talks to the child over stdin/stdout (as to an
// MCP server), and closing stdin is enough for a well-behaved child to
// stop: Stop returns its normal exit without signals.
func TestPipesAndGracefulStop(t *testing.T) {
	ring := NewRing(64)
	c := shell(t, `echo starting >&2; while read -r line; do echo "got $line"; done; echo bye >&2`)
	c.StdinPipe, c.StdoutPipe, c.Stderr = true, true, ring
	p := start(t, c)
	defer p.Stdout().Close()
	if _, err := io.WriteString(p.Stdin(), "ping\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 9)
	if _, err := io.ReadFull(p.Stdout(), buf); err != nil || string(buf) != "got ping\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
	begin := time.Now()
	st, err := p.Stop(20 * time.Second)
	if err != nil || st.ExitCode() != 0 {
		t.Fatalf("Stop: %v %v; want a normal exit after stdin closed", st, err)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("Stop took %v: it did not close stdin first", d)
	}
	if ring.String() != "starting\nbye\n" {
		t.Errorf("stderr %q", ring.String())
	}
	notReapable(t, p.Pid())
}

// A child that ignores stdin's EOF but handles SIGTERM is asked to
// terminate before it is killed.
func TestStopSendsTermBeforeKill(t *testing.T) {
	var out syncBuf
	c := shell(t, `trap 'exit 7' TERM; echo ready; while :; do sleep 0.05; done`)
	c.StdinPipe, c.Stdout = true, &out
	p := start(t, c)
	deadline := time.Now().Add(10 * time.Second)
	for out.String() == "" && time.Now().Before(deadline) { // the trap is set
		time.Sleep(10 * time.Millisecond)
	}
	st, err := p.Stop(300 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if ws := st.Sys().(syscall.WaitStatus); ws.Signaled() || st.ExitCode() != 7 {
		t.Errorf("exit %v: want 7 from the TERM trap, not a kill", st)
	}
	if groupAlive(p.Pid()) {
		t.Error("the group outlived Stop")
	}
}

// The whole tree dies with Stop, even when every process of it ignores
// SIGTERM, and nothing is left unreaped.
func TestStopKillsGrandchildren(t *testing.T) {
	c := shell(t, `trap '' TERM; sh -c 'sleep 1000 & sleep 1000' & sleep 1000 & echo ready; wait`)
	var out syncBuf
	c.Stdout = &out
	p := start(t, c)
	pgid := p.Pid()
	deadline := time.Now().Add(10 * time.Second)
	for len(groupMembers(t, pgid)) < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	members := groupMembers(t, pgid)
	if members != nil && len(members) < 4 {
		t.Fatalf("group %d has %v; the tree did not start", pgid, members)
	}
	grace := 200 * time.Millisecond
	begin := time.Now()
	if _, err := p.Stop(grace); err != nil {
		t.Fatal(err)
	}
	el := time.Since(begin)
	if el < 2*grace {
		t.Errorf("Stop took %v with TERM ignored; want at least 2×%v before the kill", el, grace)
	}
	if el > 10*time.Second {
		t.Errorf("Stop took %v", el)
	}
	if groupAlive(pgid) {
		t.Errorf("processes of group %d remain after Stop: %v", pgid, groupMembers(t, pgid))
	}
	for _, pid := range members {
		if f := procStat(pid); len(f) > 0 && f[0] != "Z" && f[0] != "X" {
			t.Errorf("pid %d of the tree survived (state %s)", pid, f[0])
		}
	}
	notReapable(t, pgid)
}

// When the child exits on its own, Wait kills what it left in the group
// (background jobs) and reaps it; the call does not wait for them.
func TestWaitKillsBackgroundAndReaps(t *testing.T) {
	var out syncBuf
	c := shell(t, `sleep 1000 & echo $!`)
	c.Stdout = &out
	p := start(t, c)
	begin := time.Now()
	st, err := p.Wait()
	if err != nil || st.ExitCode() != 0 {
		t.Fatalf("Wait: %v %v", st, err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Wait took %v: it waited for the background job", d)
	}
	bg, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("stdout %q", out.String())
	}
	waitGone(t, bg)
	if groupAlive(p.Pid()) {
		t.Error("the group outlived Wait")
	}
	notReapable(t, p.Pid())
	// Wait again: same answer; Kill after Wait sends nothing.
	if st2, err2 := p.Wait(); st2 != st || err2 != err {
		t.Errorf("second Wait = %v %v", st2, err2)
	}
	p.Kill()
}

// Kill ends the tree at once; many short-lived children leave no zombie.
func TestKillAndNoZombies(t *testing.T) {
	p := start(t, shell(t, `sleep 1000 & sleep 1000`))
	p.Kill()
	st, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if ws := st.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("exit %v, want killed by SIGKILL", st)
	}
	if groupAlive(p.Pid()) {
		t.Error("the group outlived Kill+Wait")
	}
	var pids []int
	for range 20 {
		p := start(t, &Cmd{Path: lookPath(t, "true")})
		p.Wait()
		pids = append(pids, p.Pid())
	}
	for _, pid := range pids {
		notReapable(t, pid)
	}
	if zs := zombiesOfSelf(t); len(zs) > 0 {
		t.Errorf("zombie children of the test process: %v", zs)
	}
}

// A process that left the group (setsid) and holds stdout does not hold
// Wait past the pipe grace.
func TestWaitBoundedByEscapedChild(t *testing.T) {
	lookPath(t, "setsid")
	var out syncBuf
	c := shell(t, `setsid sh -c 'echo $$; exec sleep 30' & sleep 0.2`)
	c.Stdout = &out
	c.PipeGrace = 100 * time.Millisecond
	p := start(t, c)
	begin := time.Now()
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Wait took %v with an escaped child holding stdout", d)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(out.String())); err == nil {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil && !isZombie(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("pid %d survived", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isZombie(pid int) bool {
	f := procStat(pid)
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// groupMembers lists the processes of group pgid from /proc (nil where
// there is no /proc).
func groupMembers(t *testing.T, pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(pid); len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// procStat returns the fields of /proc/pid/stat after the command name:
// state, ppid, pgrp, ...
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// zombiesOfSelf lists zombie children of the test process (nil without
// /proc).
func zombiesOfSelf(t *testing.T) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	me := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(pid); len(f) > 1 && f[0] == "Z" && f[1] == me {
			out = append(out, pid)
		}
	}
	return out
}
