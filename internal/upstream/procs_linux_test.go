package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/support/proc"
)

// zombieChildren lists this process's children that exited and were not
// reaped.
func zombieChildren() []int {
	self := os.Getpid()
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := proc.ReadStat(pid); err == nil && st.PPid == self && st.State == 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// A stdio server whose grandchild daemonizes (double fork, a session of
// its own: out of reach of the group kill) leaves it to clawd, the child
// subreaper, instead of init. While the server runs the daemon is kept; once
// the server is stopped, the daemon is ended and reaped: no process and no
// zombie is left. Without the subreaper the daemon would be init's, and
// alive after the server stopped.
//
// Not parallel: while the test process is a subreaper, ReapAdopted could
// take the exit status of a child another test started through os/exec.
func TestDaemonizedGrandchildEnded(t *testing.T) {
	if err := proc.BecomeSubreaper(); err != nil {
		t.Skipf("no child subreaper: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	token := fmt.Sprintf("adopt-%d", time.Now().UnixNano())
	go func() {
		proc.WatchAdopted(ctx, 50*time.Millisecond, func(p []int) { EndAdopted(p, token) })
		close(watched)
	}()
	t.Cleanup(func() {
		cancel()
		<-watched
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	})

	m, _ := newTestManager(t, Options{OwnerToken: token})
	pidFile := filepath.Join(t.TempDir(), "daemon")
	m.Apply(context.Background(), []ServerConfig{fake("d", "-daemonize", pidFile)})
	server := connected(t, m, "d").PID
	daemon := readPid(t, pidFile)
	defer syscall.Kill(daemon, syscall.SIGKILL)

	st, err := proc.ReadStat(daemon)
	if err != nil || st.PPid != os.Getpid() || st.Sid != daemon {
		t.Fatalf("the daemon %d: %+v %v; want it adopted by us (%d) in a session of its own", daemon, st, err, os.Getpid())
	}
	time.Sleep(300 * time.Millisecond) // a few rounds of the watcher
	if !alive(daemon) {
		t.Fatal("the daemon of a running server was ended")
	}

	m.Apply(context.Background(), nil)
	gone(t, server, "the server after it was removed")
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat("/proc/" + strconv.Itoa(daemon))
		if os.IsNotExist(err) {
			break // ended and reaped
		}
		if time.Now().After(deadline) {
			st, _ := proc.ReadStat(daemon)
			t.Fatalf("the daemon of the removed server is still there: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); len(zombieChildren()) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("zombies left: %v", zombieChildren())
			break
		}
	}
}

// The manager records each running stdio child (pid, group, start time)
// and removes the record when none runs. After a kill -9, SweepRecorded
// ends a recorded process that still runs with the recorded start time,
// spares one whose pid now has another start time (a reused pid), spares
// the records of a daemon that still runs, and removes the dead daemon's
// file.
func TestProcsRecordedAndSwept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := ProcFileFor(dir, os.Getpid(), "")
	m, _ := newTestManager(t, Options{ProcFile: file})
	m.Apply(context.Background(), []ServerConfig{fake("r")})
	pid := connected(t, m, "r").PID
	var f procFile
	b, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	if err != nil {
		t.Fatalf("the record: %v", err)
	}
	st, _ := proc.ReadStat(pid)
	if len(f.Procs) != 1 || f.Procs[0].Pid != pid || f.Procs[0].Pgid != pid || f.Procs[0].Start != st.Start || f.Procs[0].Start == 0 ||
		f.Clawd.Pid != os.Getpid() || f.BootID != proc.BootID() {
		t.Fatalf("record %+v, want server pid %d started at %d", f, pid, st.Start)
	}
	// Our own file is never swept.
	if ended, _ := SweepRecorded(dir); len(ended) > 0 || !alive(pid) {
		t.Fatalf("a sweep ended %v of this very process's servers", ended)
	}
	m.Apply(context.Background(), nil)
	gone(t, pid, "the removed server")
	deadline := time.Now().Add(5 * time.Second)
	for _, err := os.Stat(file); err == nil; _, err = os.Stat(file) {
		if time.Now().After(deadline) {
			t.Fatal("the record outlived the last server")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A dead daemon's file: a survivor (in a group of its own, with a
	// member) and a reused pid, both started after the daemon.
	dead := deadDaemon(t)
	time.Sleep(20 * time.Millisecond) // a later clock tick
	survivor, err := proc.Start(&proc.Cmd{Path: "/bin/sh", Args: []string{"-c", "sleep 1000 & sleep 1000; wait"}})
	if err != nil {
		t.Fatal(err)
	}
	defer survivor.Stop(0)
	reused, err := proc.Start(&proc.Cmd{Path: "/bin/sleep", Args: []string{"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer reused.Stop(0)
	for deadline := time.Now().Add(10 * time.Second); len(groupMembers(survivor.Pid())) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the survivor's background sleep did not start")
		}
	}
	sst, _ := proc.ReadStat(survivor.Pid())
	rst, _ := proc.ReadStat(reused.Pid())
	write := func(name string, f procFile) {
		b, _ := json.Marshal(f)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1.json", procFile{BootID: proc.BootID(), Clawd: dead, Procs: []procRecord{
		{Server: "a", Pid: survivor.Pid(), Pgid: survivor.Pid(), Start: sst.Start},
		{Server: "b", Pid: reused.Pid(), Pgid: reused.Pid(), Start: rst.Start - 1},
	}})
	// A daemon that still runs: a process of the test's own, since the
	// test's parent may be outside its pid namespace (pid 0 there).
	live, err := proc.Start(&proc.Cmd{Path: "/bin/sleep", Args: []string{"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Stop(0)
	lst, _ := proc.ReadStat(live.Pid())
	write("2.json", procFile{BootID: proc.BootID(), Clawd: procRecord{Pid: live.Pid(), Start: lst.Start}, Procs: []procRecord{
		{Server: "c", Pid: reused.Pid(), Pgid: reused.Pid(), Start: rst.Start},
	}})
	ended, err := SweepRecorded(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ended, []int{survivor.Pid()}) {
		t.Errorf("the sweep ended %v, want only the survivor %d", ended, survivor.Pid())
	}
	select {
	case <-survivor.Exited():
	case <-time.After(5 * time.Second):
		t.Error("the recorded survivor still runs")
	}
	for deadline := time.Now().Add(5 * time.Second); len(groupMembers(survivor.Pid())) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("members of the survivor's group still run: %v", groupMembers(survivor.Pid()))
			break
		}
	}
	if !alive(reused.Pid()) {
		t.Error("a pid with another start time was ended")
	}
	if _, err := os.Stat(filepath.Join(dir, "1.json")); !os.IsNotExist(err) {
		t.Error("the dead daemon's file was kept")
	}
	if _, err := os.Stat(filepath.Join(dir, "2.json")); err != nil {
		t.Error("a live daemon's file was removed")
	}
}

// deadDaemon is the record of a process that ran and exited.
func deadDaemon(t testing.TB) procRecord {
	st := exitedProcess(t)
	return procRecord{Pid: st.Pid, Start: st.Start}
}

// exitedProcess is the stat of a process that ran and exited (read before
// it was reaped).
func exitedProcess(t testing.TB) proc.Stat {
	p, err := proc.Start(&proc.Cmd{Path: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	st, _ := proc.ReadStat(p.Pid())
	p.Wait()
	st.Pid = p.Pid()
	return st
}

// startSleep starts a sleep that the test's end stops.
func startSleep(t *testing.T) *proc.Process {
	t.Helper()
	p, err := proc.Start(&proc.Cmd{Path: "/bin/sleep", Args: []string{"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(0) })
	return p
}

// groupMembers lists the living (not zombie) processes of group pgid.
func groupMembers(pgid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := proc.ReadStat(pid); err == nil && st.Pgid == pgid && st.State != 'Z' && st.State != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// A record is only a claim: whoever can write the record directory could
// name any process. SweepRecorded never signals what no server of the
// recorded daemon can be: the sweeping process itself or one of its
// ancestors, a process of the sweeper's own group (the group kill would end
// the sweeper with it), or a process that started before the recorded
// daemon did (a daemon's children start after it). And it acts on no record
// in a directory or file another user could have written.
func TestSweepRecordedSparesWhatNoServerCanBe(t *testing.T) {
	t.Parallel()
	early, err := proc.Start(&proc.Cmd{Path: "/bin/sleep", Args: []string{"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer early.Stop(0)
	time.Sleep(20 * time.Millisecond) // a later clock tick for the daemon below
	dead := deadDaemon(t)
	est, _ := proc.ReadStat(early.Pid())
	self, _ := proc.ReadStat(os.Getpid())
	parent, _ := proc.ReadStat(os.Getppid())
	if est.Start >= dead.Start {
		t.Skipf("no later clock tick: %d, %d", est.Start, dead.Start)
	}
	dir := t.TempDir()
	write := func(name string, f procFile) string {
		b, _ := json.Marshal(f)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	old := procRecord{Pid: dead.Pid, Start: 1} // claims to predate everything
	write("1.json", procFile{BootID: proc.BootID(), Clawd: dead, Procs: []procRecord{
		{Server: "early", Pid: early.Pid(), Pgid: early.Pid(), Start: est.Start},
	}})
	write("2.json", procFile{BootID: proc.BootID(), Clawd: old, Procs: []procRecord{
		{Server: "self", Pid: os.Getpid(), Pgid: self.Pgid, Start: self.Start},
		{Server: "parent", Pid: os.Getppid(), Pgid: parent.Pgid, Start: parent.Start},
	}})
	if ended, _ := SweepRecorded(dir); len(ended) > 0 {
		t.Errorf("the sweep ended %v", ended)
	}
	if !alive(early.Pid()) {
		t.Error("a process older than the recorded daemon was ended")
	}

	// A record another user could have planted: a file of another owner, or
	// a directory others may write to.
	victim, err := proc.Start(&proc.Cmd{Path: "/bin/sleep", Args: []string{"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Stop(0)
	vst, _ := proc.ReadStat(victim.Pid())
	rec := procFile{BootID: proc.BootID(), Clawd: old, Procs: []procRecord{
		{Server: "v", Pid: victim.Pid(), Pgid: victim.Pid(), Start: vst.Start},
	}}
	if os.Geteuid() == 0 {
		path := write("3.json", rec)
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if ended, _ := SweepRecorded(dir); len(ended) > 0 || !alive(victim.Pid()) {
			t.Errorf("a record of another user's ended %v", ended)
		}
		os.Remove(path)
	}
	write("4.json", rec)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if ended, _ := SweepRecorded(dir); len(ended) > 0 || !alive(victim.Pid()) {
		t.Errorf("a record in a directory anyone may write to ended %v", ended)
	}
}

// A daemon killed with -9 stays a zombie until its parent reaps it: a host
// that is slow to, or PID 1 of a container that reaps late or never. It is
// dead all the same: a daemon started meanwhile ends what its record lists,
// instead of taking the zombie's matching start time for a daemon that
// still runs and leaving the record (and the processes) for a later start.
func TestSweepRecordedTakesAZombieDaemonForDead(t *testing.T) {
	dir := t.TempDir()
	zp, err := proc.Start(&proc.Cmd{Path: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	<-zp.Exited()
	t.Cleanup(func() { zp.Wait() })
	zst, err := proc.ReadStat(zp.Pid())
	if err != nil || zst.State != 'Z' {
		t.Fatalf("the daemon stand-in: %+v, %v; want a zombie", zst, err)
	}
	time.Sleep(20 * time.Millisecond) // a later clock tick
	survivor := startSleep(t)
	sst, _ := proc.ReadStat(survivor.Pid())
	b, _ := json.Marshal(procFile{BootID: proc.BootID(), Clawd: procRecord{Pid: zp.Pid(), Start: zst.Start}, Procs: []procRecord{
		{Server: "bash", Pid: survivor.Pid(), Pgid: survivor.Pid(), Start: sst.Start},
	}})
	if err := os.WriteFile(filepath.Join(dir, "1.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	ended, err := SweepRecorded(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ended, []int{survivor.Pid()}) {
		t.Errorf("the sweep ended %v, want the zombie daemon's recorded process %d", ended, survivor.Pid())
	}
	select {
	case <-survivor.Exited():
	case <-time.After(30 * time.Second):
		t.Error("the recorded process of a zombie daemon still runs")
	}
}
