package upstream

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/support/proc"
)

// leaderlessGroup starts sh in a group of its own that backgrounds a sleep
// and exits; it returns the record of sh (taken while it ran) and the
// sleep, left in the group without its leader, as a bash call's background
// job is left when clawd is killed (the shell dies of the parent-death
// signal).
func leaderlessGroup(t *testing.T) (procRecord, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "sleep 1000 & echo $!; read x")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var member int
	if _, err := fmt.Fscan(out, &member); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(member, syscall.SIGKILL) })
	rec := leaderRecord("", cmd.Process.Pid)
	in.Close()
	cmd.Wait()
	if st, err := proc.ReadStat(member); err != nil || st.Pgid != rec.Pgid {
		t.Fatalf("the member %d: %+v %v; want it in group %d", member, st, err, rec.Pgid)
	}
	return rec, member
}

func writeRecord(t testing.TB, path string, f procFile) {
	t.Helper()
	b, _ := json.Marshal(f)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A bash call's shell dies with a killed clawd and leaves what it forked
// in its group: the sweep ends the members of a recorded group whose
// leader is gone, and spares a group whose members are of another session
// than the recorded one (its number could be a later group's).
func TestSweepRecordedEndsLeaderlessGroup(t *testing.T) {
	t.Parallel()
	dead := deadDaemon(t)
	time.Sleep(20 * time.Millisecond) // a later clock tick
	rec, member := leaderlessGroup(t)
	if rec.Sid == nil || rec.Start == 0 {
		t.Fatalf("record %+v: no session or start time", rec)
	}
	other, otherMember := leaderlessGroup(t)
	elsewhere := *other.Sid + 1 // recorded in another session than its members are in
	other.Sid = &elsewhere

	dir := t.TempDir()
	writeRecord(t, filepath.Join(dir, "1-1-bash.json"), procFile{BootID: proc.BootID(), Clawd: dead, Procs: []procRecord{rec, other}})
	ended, err := SweepRecorded(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ended, []int{member}) {
		t.Errorf("the sweep ended %v, want the member %d only", ended, member)
	}
	gone(t, member, "the member of the recorded group")
	if !alive(otherMember) {
		t.Error("a member of another session than the recorded one was ended")
	}
}

// A bash call's shell leads a session of its own: a job it moved to
// another process group of that session (`set -m`) is left behind by a
// killed clawd as well, and the sweep ends it with the group's members. A
// member of the recorded group number in another session is still spared
// (TestSweepRecordedEndsLeaderlessGroup).
func TestSweepRecordedEndsLeaderlessSession(t *testing.T) {
	t.Parallel()
	t.Run("leader reaped", func(t *testing.T) { t.Parallel(); sweepSession(t, true) })
	// A leader nobody reaps (its parent, clawd, is gone, and PID 1 in a
	// container may not reap) still has its pid: the session is the
	// recorded one all the same.
	t.Run("leader a zombie", func(t *testing.T) { t.Parallel(); sweepSession(t, false) })
}

func sweepSession(t *testing.T, reap bool) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	dead := deadDaemon(t)
	time.Sleep(20 * time.Millisecond) // a later clock tick
	cmd := exec.Command(bash, "-c", "sleep 1000 & echo $!; set -m; sleep 1000 & echo $!; read x")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var member, job int
	if _, err := fmt.Fscan(out, &member, &job); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(member, syscall.SIGKILL); syscall.Kill(job, syscall.SIGKILL) })
	rec := leaderRecord("", cmd.Process.Pid)
	in.Close()
	if reap {
		cmd.Wait()
	} else {
		t.Cleanup(func() { cmd.Wait() })
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := proc.ReadStat(job); err != nil || st.Pgid == rec.Pgid || st.Sid != rec.Pgid {
		t.Fatalf("the job %d: %+v %v; want it in session %d, out of its group", job, st, err, rec.Pgid)
	}
	dir := t.TempDir()
	writeRecord(t, filepath.Join(dir, "1-1-bash-0.json"), procFile{BootID: proc.BootID(), Clawd: dead, Procs: []procRecord{rec}})
	ended, err := SweepRecorded(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The member may be ended by the signal to the group of a leader still
	// there (a zombie), which counts the leader only.
	if !slices.Contains(ended, job) || (reap && !slices.Contains(ended, member)) {
		t.Errorf("the sweep ended %v, want the member %d and the job %d", ended, member, job)
	}
	gone(t, member, "the member of the recorded group")
	gone(t, job, "the job in another group of the recorded session")
}

// The record of a bash call's group: written while the call runs, with the
// shell's pid, group, start time and session, and cleared once dropped.
// The file is kept for the next call (a write, not a create and an
// unlink, per call) and removed by Close.
func TestGroupRecorder(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "procs") // made by the first record
	g := NewGroupRecorder(dir, nil)
	file := ProcFileFor(dir, os.Getpid(), "bash-0")
	read := func() procFile {
		t.Helper()
		var f procFile
		b, err := os.ReadFile(file)
		if err == nil {
			err = json.Unmarshal(b, &f)
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.Clawd.Pid != os.Getpid() || f.BootID != proc.BootID() {
			t.Errorf("record %+v: not this daemon's", f)
		}
		return f
	}
	for range 2 {
		p := startSleep(t)
		forget := g.Started(p.Pid())
		if err := ownPrivate(dir); err != nil {
			t.Error(err)
		}
		if err := ownPrivate(file); err != nil {
			t.Error(err)
		}
		st, _ := proc.ReadStat(p.Pid())
		want := procRecord{Pid: p.Pid(), Pgid: p.Pid(), Start: st.Start, Sid: &st.Sid}
		if f := read(); len(f.Procs) != 1 || !reflect.DeepEqual(f.Procs[0], want) {
			t.Fatalf("record %+v, want %+v", f, want)
		}
		forget()
		forget()
		if f := read(); len(f.Procs) != 0 {
			t.Fatalf("the record outlived the group: %+v", f)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files after two calls one after the other, want the one reused", len(ents))
	}

	// Two at once: two files; Close removes them, the one in use once
	// given back.
	p, q := startSleep(t), startSleep(t)
	forgetP := g.Started(p.Pid())
	forgetQ := g.Started(q.Pid())
	forgetP()
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files for two calls at once, want 2", len(ents))
	}
	g.Close()
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files after Close with a call running, want its one", len(ents))
	}
	forgetQ()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files after Close and the last call, want none", len(ents))
	}
}

// Record files are named by the daemon's pid and start time: a daemon that
// got the pid of a killed one does not overwrite the file the sweep has
// not read yet, so what the killed daemon left is still ended.
func TestRecordOfReusedPidKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	self, _ := proc.ReadStat(os.Getpid())
	survivor, err := proc.Start(&proc.Cmd{Path: "/bin/sleep", Args: []string{"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer survivor.Stop(0)
	sst, _ := proc.ReadStat(survivor.Pid())
	// The killed daemon had this process's pid and an earlier start.
	killed := procRecord{Pid: os.Getpid(), Start: self.Start - 1}
	oldFile := procFileName(dir, killed.Pid, killed.Start, "")
	writeRecord(t, oldFile, procFile{BootID: proc.BootID(), Clawd: killed, Procs: []procRecord{
		{Pid: survivor.Pid(), Pgid: survivor.Pid(), Start: sst.Start},
	}})

	file := ProcFileFor(dir, os.Getpid(), "")
	if err := writeProcFile(file, []procRecord{{Pid: 1, Start: 1}}); err != nil {
		t.Fatal(err)
	}
	ended, err := SweepRecorded(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ended, []int{survivor.Pid()}) {
		t.Errorf("the sweep ended %v, want the killed daemon's survivor %d", ended, survivor.Pid())
	}
	select {
	case <-survivor.Exited():
	case <-time.After(5 * time.Second):
		t.Error("the killed daemon's survivor still runs")
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("this daemon's own file: %v", err)
	}
}

// killVerified opens the pidfd before it reads the start time, and signals
// through the pidfd: a pidfd opened on the pid's former owner, which has
// exited since (as if the pid were reused after the open), reaches no
// process, and the pid's present owner, though it passes the check, is
// not signalled. Where pidfd_open is missing the check is followed by
// kill(2).
func TestKillVerifiedOpensBeforeCheck(t *testing.T) {
	defer func(f func(int, int) (int, error)) { pidfdOpen = f }(pidfdOpen)
	defer func(f func(int) (proc.Stat, error)) { readStat = f }(readStat)
	var events []string
	pidfdOpen = func(pid, flags int) (int, error) {
		events = append(events, "open")
		return unix.PidfdOpen(pid, flags)
	}
	readStat = func(pid int) (proc.Stat, error) {
		events = append(events, "stat")
		return proc.ReadStat(pid)
	}
	check := func(st proc.Stat) bool { return true }

	target := startSleep(t)
	if got := killVerified(target.Pid(), check, nil); got != killed {
		t.Fatalf("killVerified: %v, want killed", got)
	}
	if !slices.Equal(events, []string{"open", "stat"}) {
		t.Errorf("order %v, want the pidfd opened before the check", events)
	}
	<-target.Exited()

	// A pidfd of a process that has exited since stands in for the one
	// opened before the pid changed hands.
	former := startSleep(t)
	fd, err := unix.PidfdOpen(former.Pid(), 0)
	if err != nil {
		t.Skipf("no pidfd: %v", err)
	}
	former.Kill()
	former.Wait()
	present := startSleep(t)
	defer unix.Close(fd)
	pidfdOpen = func(pid, flags int) (int, error) { return unix.Dup(fd) }
	if got := killVerified(present.Pid(), check, nil); got != notKilled {
		t.Errorf("killVerified through the former owner's pidfd: %v, want notKilled", got)
	}
	// A signal that reached it would end it within moments: watch for
	// its exit a while.
	select {
	case <-present.Exited():
		t.Error("the pid's present owner was signalled through another process's pidfd")
	case <-time.After(time.Second):
	}

	// No pidfd_open: kill(2) after the check.
	pidfdOpen = func(int, int) (int, error) { return -1, unix.ENOSYS }
	if got := killVerified(present.Pid(), check, nil); got != killed {
		t.Errorf("killVerified without pidfd: %v, want killed", got)
	}
	gone(t, present.Pid(), "the process killed without a pidfd")

	// A process the check refuses is not signalled.
	pidfdOpen = unix.PidfdOpen
	spared := startSleep(t)
	if got := killVerified(spared.Pid(), func(proc.Stat) bool { return false }, nil); got != refused {
		t.Errorf("killVerified of a refused process: %v", got)
	}
	if !alive(spared.Pid()) {
		t.Error("a refused process was signalled")
	}
}

// The group signal goes through the leader's pidfd, which names the group
// itself: it ends the group even when the number given alongside (the
// kill(-pgid) fallback's) names no group at all. Skipped on a kernel
// without PIDFD_SIGNAL_PROCESS_GROUP (before 6.9).
func TestSignalGroupThroughPidfd(t *testing.T) {
	t.Parallel()
	p, err := proc.Start(&proc.Cmd{Path: "/bin/sh", Args: []string{"-c", "sleep 1000 & wait"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(0)
	deadline := time.Now().Add(5 * time.Second)
	for len(groupMembers(p.Pid())) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the background sleep did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	members := groupMembers(p.Pid())
	fd, err := unix.PidfdOpen(p.Pid(), 0)
	if err != nil {
		t.Skipf("no pidfd: %v", err)
	}
	defer unix.Close(fd)
	if err := unix.PidfdSendSignal(fd, 0, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP); err != nil {
		t.Skipf("no PIDFD_SIGNAL_PROCESS_GROUP: %v", err)
	}
	const noGroup = 1<<22 + 7 // above pid_max's largest value: no group has it
	if err := signalGroup(fd, noGroup); err != nil {
		t.Fatalf("signalGroup: %v", err)
	}
	for _, pid := range members {
		gone(t, pid, "a member of the group signalled through its leader's pidfd")
	}
}

// A process that before's signal killed, and that its parent reaped before
// killVerified's own signal (an idle moment of the sweeping goroutine on a
// loaded machine), is reported killed: the sweep's list of what it ended
// missed it when that signal found no process.
func TestKillVerifiedCountsWhatBeforeKilled(t *testing.T) {
	t.Parallel()
	target := startSleep(t)
	before := func(int) error {
		target.Kill()
		target.Wait() // reaped: the pid names no process any more
		return nil
	}
	if got := killVerified(target.Pid(), func(proc.Stat) bool { return true }, before); got != killed {
		t.Errorf("killVerified of a process before killed and its parent reaped: %v, want killed", got)
	}
	// A failed before does not make a failed signal a kill.
	former := startSleep(t)
	failed := func(int) error {
		former.Kill()
		former.Wait()
		return errNoGroup
	}
	if got := killVerified(former.Pid(), func(proc.Stat) bool { return true }, failed); got != notKilled {
		t.Errorf("killVerified after a failed before: %v, want notKilled", got)
	}
}

// A record an older clawd left (named PID.json, without the session) is
// still read after an upgrade: the server process it names is ended and
// the file removed.
func TestSweepRecordedReadsOlderRecords(t *testing.T) {
	t.Parallel()
	dead := deadDaemon(t)
	time.Sleep(20 * time.Millisecond) // a later clock tick
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	reaped := make(chan struct{})
	go func() { cmd.Wait(); close(reaped) }() // reaped once ended, so gone() sees it go
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL); <-reaped })
	st, err := proc.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, strconv.Itoa(dead.Pid)+".json")
	old := fmt.Sprintf(`{"boot_id":%q,"clawd":{"pid":%d,"start":%d},"procs":[{"server":"fake","pid":%d,"pgid":%d,"start":%d}]}`,
		proc.BootID(), dead.Pid, dead.Start, pid, pid, st.Start)
	if err := os.WriteFile(file, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	ended, err := SweepRecorded(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ended, pid) {
		t.Errorf("the sweep ended %v, want the recorded server %d", ended, pid)
	}
	gone(t, pid, "the server an older clawd recorded")
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the older record is still there: %v", err)
	}
}

// Session 0 is a real session (a container's processes share it when their
// runtime started them without setsid): a record keeps it, and tells it
// apart from a record that has no session (older versions), whose
// leaderless members the sweep leaves alone.
func TestRecordKeepsSessionZero(t *testing.T) {
	zero := 0
	b, err := json.Marshal(procRecord{Pid: 5, Pgid: 5, Start: 9, Sid: &zero})
	if err != nil {
		t.Fatal(err)
	}
	var back procRecord
	if err := json.Unmarshal(b, &back); err != nil || back.Sid == nil || *back.Sid != 0 {
		t.Fatalf("%s read back as %+v, %v; want session 0", b, back, err)
	}
	var old procRecord
	if err := json.Unmarshal([]byte(`{"pid":5,"pgid":5,"start":9}`), &old); err != nil || old.Sid != nil {
		t.Fatalf("a record without a session read as %+v, %v; want no session", old, err)
	}
}

// The members of every leaderless group a sweep finds are ended from one
// listing of /proc per round, not one per record: with many records (a
// daemon killed while many bash calls ran) the sweep would otherwise read
// every process's stat once per record.
func TestSweepRecordedScansProcOncePerRound(t *testing.T) {
	dead := deadDaemon(t)
	time.Sleep(20 * time.Millisecond) // a later clock tick
	var members []int
	dir := t.TempDir()
	for i := range 3 {
		rec, member := leaderlessGroup(t)
		members = append(members, member)
		writeRecord(t, filepath.Join(dir, fmt.Sprintf("1-1-bash-%d.json", i)), procFile{BootID: proc.BootID(), Clawd: dead, Procs: []procRecord{rec}})
	}
	for i, rec := range deadLeaders(t, 20) {
		writeRecord(t, filepath.Join(dir, fmt.Sprintf("1-1-bash-gone-%d.json", i)), procFile{BootID: proc.BootID(), Clawd: dead, Procs: []procRecord{rec}})
	}
	defer func(f func() ([]os.DirEntry, error)) { readProcDir = f }(readProcDir)
	scans := 0
	readProcDir = func() ([]os.DirEntry, error) {
		scans++
		return os.ReadDir("/proc")
	}
	ended, err := SweepRecorded(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ended)
	slices.Sort(members)
	if !slices.Equal(ended, members) {
		t.Errorf("the sweep ended %v, want the members %v", ended, members)
	}
	for _, m := range members {
		gone(t, m, "a member of a recorded group")
	}
	// One round ends the members, the next finds none left.
	if scans > 2 {
		t.Errorf("/proc was listed %d times for 23 leaderless records, want at most 2", scans)
	}
}

// A pooled record is rewritten in place, and a file is created empty
// before its first record: a sweep reading it at that moment (a second
// daemon of the workspace starting) sees text that does not parse. The
// file's name says whose it is; a live daemon's is left alone, or that
// daemon's later records would go to a file no sweep can find. A dead
// daemon's unreadable file is removed.
func TestSweepKeepsLiveDaemonsUnreadableRecord(t *testing.T) {
	dir := t.TempDir()
	live := startSleep(t)
	livePath := procFileName(dir, live.Pid(), startTime(live.Pid()), "bash-0")
	torn := procFileName(dir, live.Pid(), startTime(live.Pid()), "bash-1")
	deadPath := procFileName(dir, live.Pid(), startTime(live.Pid())+1, "bash-0")
	for path, text := range map[string]string{livePath: "", torn: `{"boot_id":"x","procs":[]}  "pid":1}]}`, deadPath: ""} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := SweepRecorded(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{livePath, torn} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the live daemon's record %s: %v; want it kept", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(deadPath); !os.IsNotExist(err) {
		t.Errorf("a dead daemon's unreadable record: %v; want it removed", err)
	}
}

// One /proc scan serves every leaderless record, but each member is
// judged by one record's checks at a time: two records of the same group
// number (in two files), one of another session and one whose leader
// started after the member, do not add up to a record that ends it.
func TestSweepRecordsOfOneGroupDoNotCombine(t *testing.T) {
	t.Parallel()
	dead := deadDaemon(t)
	time.Sleep(20 * time.Millisecond)
	rec, member := leaderlessGroup(t)
	elsewhere := *rec.Sid + 1
	otherSession := rec
	otherSession.Sid = &elsewhere
	later := rec
	later.Start = startTime(member) + 1 // a leader started after the member
	dir := t.TempDir()
	writeRecord(t, filepath.Join(dir, "1-1-bash-0.json"), procFile{BootID: proc.BootID(), Clawd: dead, Procs: []procRecord{otherSession}})
	writeRecord(t, filepath.Join(dir, "1-1-bash-1.json"), procFile{BootID: proc.BootID(), Clawd: dead, Procs: []procRecord{later}})
	ended, err := SweepRecorded(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ended) != 0 || !alive(member) {
		t.Errorf("the sweep ended %v (member %d alive: %v); want nothing ended", ended, member, alive(member))
	}
}
