package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/support/proc"
)

// recordsUsed: SweepRecorded reads the records persistProcs writes.
const recordsUsed = true

// startAndSession is pid's start time and session, and whether its stat
// could be read (if not: 0, 0, false).
func startAndSession(pid int) (uint64, int, bool) {
	st, err := proc.ReadStat(pid)
	if err != nil {
		return 0, 0, false
	}
	return st.Start, st.Sid, true
}

// markOf returns the OwnerEnv value in pid's environment at exec.
func markOf(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	prefix := []byte(OwnerEnv + "=")
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v), true
		}
	}
	return "", false
}

// EndAdopted ends those of pids (this process's adopted children, from
// proc.ReapAdopted) that an upstream of this clawd left behind: marked
// with token and this clawd's pid and a spawn whose server has exited, or
// with token and a clawd that no longer runs. An orphan of a server that
// still runs is kept (a server may run a daemon of its own; it ends with
// the server), and so is a child without such a mark (one a built-in tool
// started, say): it is only reaped when it exits. A process that leads its
// own group is ended with its group. Only this process's children are
// looked at, so nothing else on the machine can be hit. It returns the
// pids it ended; the next proc.ReapAdopted reaps them.
func EndAdopted(pids []int, token string) []int {
	if token == "" {
		token = "-"
	}
	self := os.Getpid()
	var ended []int
	for _, pid := range pids {
		v, ok := markOf(pid)
		if !ok {
			continue
		}
		owner, spawn, ok := parseMark(v, token)
		if !ok {
			continue
		}
		if owner == self {
			if spawn == 0 || spawnLive(spawn) {
				continue
			}
		} else if err := syscall.Kill(owner, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // another live clawd's
		}
		if st, err := proc.ReadStat(pid); err == nil && st.Pgid == pid {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			ended = append(ended, pid)
		}
	}
	return ended
}

// SweepRecorded ends the process groups recorded in dir (ProcFileFor
// files: the stdio upstreams and the bash tool's calls) by daemons that no
// longer run, and removes their files; files of running daemons are left
// alone. A recorded process is ended only if its pid still names a process
// with the recorded start time, in the same boot (a reused pid is another
// process and is never touched); if it still leads the recorded process
// group, the group is ended with it. A group whose leader already died (a
// bash call's shell dies with clawd) is ended member by member
// (endMembers, once every file is read: one scan of /proc serves all such
// groups). It returns the pids it ended.
func SweepRecorded(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := ownPrivate(dir); err != nil {
		return nil, err // another user could have planted what it holds
	}
	boot := proc.BootID()
	self := os.Getpid()
	spare := sweeperLine(self)
	var ended []int
	var errs []error
	var leaderless []headlessGroup
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := ownPrivate(path); err != nil {
			errs = append(errs, err) // left for its owner, not acted on
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var f procFile
		if err := json.Unmarshal(b, &f); err != nil {
			// A live daemon's pooled file is read mid-write (created
			// empty, rewritten in place): its name says whose it is.
			if !namedLive(e.Name()) {
				os.Remove(path) // not ours to act on, and of no use
			}
			continue
		}
		if f.Clawd.Pid == self && f.Clawd.Start == startTime(self) {
			continue // our own
		}
		if f.BootID == boot && f.Clawd.Start != 0 && runs(f.Clawd.Pid, f.Clawd.Start) {
			continue // that daemon still runs: these are its servers
		}
		if f.BootID == boot && boot != "" {
			for _, r := range f.Procs {
				pids, scanMembers := endRecorded(r, f.Clawd.Start, spare)
				ended = append(ended, pids...)
				if scanMembers {
					leaderless = append(leaderless, headlessGroup{r, f.Clawd.Start})
				}
			}
		}
		os.Remove(path)
	}
	ended = append(ended, endMembers(leaderless, spare)...)
	return ended, errors.Join(errs...)
}

// namedLive reports whether name, a procFileName, is that of a daemon that
// still runs (its pid names a process with its start time).
func namedLive(name string) bool {
	pid, start, ok := parseProcFileName(name)
	return ok && runs(pid, start)
}

// runs reports whether pid is the process started at start and has not
// exited. A daemon killed with -9 stays a zombie, with its pid and start
// time, until its parent reaps it (a slow host, or a container's PID 1 that
// reaps late or never): it runs no more, and what it recorded is orphaned.
func runs(pid int, start uint64) bool {
	st, err := proc.ReadStat(pid)
	return err == nil && st.Start == start && !st.Exited()
}

// endRecorded ends r's process (and its group, while it leads it) if r's
// pid still names the process started at r.Start. scanMembers reports that
// r's group is one whose members endMembers is to end: r led it, its
// session is known, and r's process is gone, or was ended here while it
// led its session too (the group signal does not reach the session's
// other groups). A record is only a claim, so
// it also spares what no server of a daemon started at daemonStart can
// be: a process started before the daemon, and the sweeping process, its
// ancestors and the members of its group (spare). It returns the pids it
// signalled.
//
// The pid is checked and signalled through a pidfd (killVerified), so a pid
// reused between the check and the signal is never hit. The group signal
// goes through the leader's pidfd too (PIDFD_SIGNAL_PROCESS_GROUP, Linux
// 6.9), which names the group by the leader's pid as the kernel holds it,
// not by its number; an older kernel gets kill(-pgid), and there a window
// is left: if the leader and every member of its group died and were
// reaped between the check and the kill, and the pids wrapped around to
// give the number to a new group leader, that group would be signalled.
func endRecorded(r procRecord, daemonStart uint64, spare sweeper) (ended []int, scanMembers bool) {
	if r.Pid <= 1 || r.Start == 0 || r.Start < daemonStart || spare.pids[r.Pid] {
		return nil, false
	}
	leads := false
	ok := func(st proc.Stat) bool {
		if st.Start != r.Start || st.Pgid == spare.pgid || spare.pids[st.Pgid] {
			return false
		}
		leads = r.Pgid == r.Pid && st.Pgid == r.Pid
		return true
	}
	signal := func(fd int) error {
		if !leads {
			return errNoGroup
		}
		return signalGroup(fd, r.Pid)
	}
	switch killVerified(r.Pid, ok, signal) {
	case killed:
		return []int{r.Pid}, leads && r.Sid != nil && *r.Sid == r.Pid
	case pidGone:
		return nil, r.Pgid == r.Pid && r.Sid != nil
	}
	return nil, false
}

var errNoGroup = errors.New("no group to signal")

// killResult is what killVerified did.
type killResult int

const (
	pidGone   killResult = iota // no process has the pid
	refused                     // a process has it, but not one to end
	killed                      // signalled
	notKilled                   // the one to end, but the signal failed
)

// pidfdOpen and readStat are what killVerified uses; tests replace them
// to see their order and to take the fallback path.
var (
	pidfdOpen = unix.PidfdOpen
	readStat  = proc.ReadStat
)

// readProcDir lists /proc for endMembers; tests count its calls.
var readProcDir = func() ([]os.DirEntry, error) { return os.ReadDir("/proc") }

// killVerified sends SIGKILL to pid if ok accepts what /proc/PID/stat says
// of it. before, if not nil, is given the pidfd (-1 without one) first: a
// group signal through it, say; its error does not stop the kill of pid.
//
// The pidfd is opened before the stat is read: a pidfd names the process
// that had the pid when it was opened, whatever later gets the number, so
// if the stat read after the open describes the process to end, the pidfd
// names it too, or names a process that has exited since, which no signal
// reaches (ESRCH). Either way the signal cannot reach a process that got
// the pid after the check. Where pidfd_open is missing (ENOSYS: Linux
// before 5.3; or not permitted) the check and a plain kill(2) follow each
// other, and a pid reused in between would be hit.
func killVerified(pid int, ok func(proc.Stat) bool, before func(fd int) error) killResult {
	fd, err := pidfdOpen(pid, 0)
	if err != nil {
		fd = -1
		if errors.Is(err, unix.ESRCH) {
			return pidGone
		}
	} else {
		defer unix.Close(fd)
	}
	st, err := readStat(pid)
	if err != nil {
		return pidGone
	}
	if !ok(st) {
		return refused
	}
	beforeErr := errNoGroup
	if before != nil {
		beforeErr = before(fd)
	}
	if fd >= 0 {
		err = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	} else {
		err = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err != nil && !(beforeErr == nil && errors.Is(err, unix.ESRCH)) {
		// ESRCH after before's signal went through is that signal's
		// work: the process it reached (the group it leads) died and was
		// reaped before this one, which happens on a loaded machine.
		return notKilled
	}
	return killed
}

// signalGroup sends SIGKILL to the group pgid, led by the process fd names
// (-1: no pidfd), whose identity the caller checked.
func signalGroup(fd, pgid int) error {
	if fd >= 0 {
		err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP)
		if !errors.Is(err, unix.EINVAL) {
			return err // EINVAL: a kernel without the flag
		}
	}
	return syscall.Kill(-pgid, syscall.SIGKILL)
}

// headlessGroup is a recorded group whose leader is gone, by a daemon
// started at daemonStart.
type headlessGroup struct {
	r           procRecord
	daemonStart uint64
}

// member reports whether st, a process of g's group, or of its session if
// g's leader led one (a bash call's shell does), is one to end.
func (g headlessGroup) member(st proc.Stat, spare sweeper) bool {
	in := st.Pgid == g.r.Pgid && st.Sid == *g.r.Sid
	if g.ledSession() {
		in = st.Sid == g.r.Pid
	}
	return in && st.Start >= g.r.Start && st.Start >= g.daemonStart &&
		!st.Exited() && !spare.pids[st.Pid]
}

// ledSession reports whether g's leader led its session too: then its
// group's number is also the session's, and a process that moved to
// another group of the session (`set -m` job control) is a member as well.
func (g headlessGroup) ledSession() bool { return *g.r.Sid == g.r.Pid && g.r.Pgid == g.r.Pid }

// endMembers ends the members of the groups whose leader died: the bash
// tool's shell dies with clawd (parent-death signal) and leaves what it
// forked in its group. While any member lives, the kernel gives the
// group's number to no new process, so a group whose number no process
// has as its pid is either the recorded group or, if that emptied,
// another group whose leader got the number later and has died too. To
// tell the two apart a member must also be of the recorded session, have
// started no earlier than the recorded leader and daemon, and be none of
// spare. When the leader led its session (the bash tool's shell does), the
// members are those of the session, whatever their group: a job moved to a
// group of its own by `set -m` is ended too, and the same reasoning holds
// for the session's number. The one case left: a process of that same session (a job of the
// login shell clawd was started from, say) that got the recorded number
// after the pids wrapped around, made it its group and exited, leaving
// members.
//
// Each round reads /proc once for every group still leaderless. A member
// can fork while this runs; the rounds are repeated until one finds
// nothing left to end (a killed process forks no more).
func endMembers(groups []headlessGroup, spare sweeper) []int {
	byPgid := map[int][]headlessGroup{}
	for _, g := range groups {
		if g.r.Pgid != spare.pgid && g.r.Pgid != spare.sid && !spare.pids[g.r.Pgid] {
			byPgid[g.r.Pgid] = append(byPgid[g.r.Pgid], g)
		}
	}
	var ended []int
	done := map[int]uint64{}
	for round := 0; round < 10 && len(byPgid) > 0; round++ {
		for pgid, gs := range byPgid {
			st, err := proc.ReadStat(pgid)
			if err != nil {
				continue
			}
			// The number names a process again: not the recorded group
			// any more, unless that process is the recorded leader itself
			// (ended by endRecorded, or a zombie nobody reaps).
			kept := slices.DeleteFunc(gs, func(g headlessGroup) bool { return st.Start != g.r.Start })
			if len(kept) == 0 {
				delete(byPgid, pgid)
			} else {
				byPgid[pgid] = kept
			}
		}
		if len(byPgid) == 0 {
			break
		}
		found := false
		ents, err := readProcDir()
		if err != nil {
			return ended
		}
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid <= 1 {
				continue
			}
			st, err := proc.ReadStat(pid)
			if err != nil || done[pid] == st.Start {
				continue
			}
			// The records of its group, then (in another group of a
			// session a record's leader led) those of its session.
			candidates := [2][]headlessGroup{byPgid[st.Pgid], nil}
			if st.Sid != st.Pgid {
				candidates[1] = byPgid[st.Sid]
			}
			for _, g := range slices.Concat(candidates[0], candidates[1]) {
				if !g.member(st, spare) {
					continue
				}
				found = true
				done[pid] = st.Start // tried once: a refused signal is not retried
				if killVerified(pid, func(st proc.Stat) bool { return g.member(st, spare) }, nil) == killed {
					ended = append(ended, pid)
				}
				break
			}
		}
		if !found {
			break
		}
	}
	return ended
}

// sweeper is what SweepRecorded never signals: the sweeping process and its
// ancestors (pids), its process group (pgid), and (as the number of a
// recorded group, which may be a session's) its session (sid).
type sweeper struct {
	pids map[int]bool
	pgid int
	sid  int
}

func sweeperLine(self int) sweeper {
	sid, _ := unix.Getsid(0)
	s := sweeper{pids: map[int]bool{}, pgid: syscall.Getpgrp(), sid: sid}
	for pid := self; pid > 1 && !s.pids[pid]; {
		s.pids[pid] = true
		st, err := proc.ReadStat(pid)
		if err != nil {
			break
		}
		pid = st.PPid
	}
	return s
}

// ownPrivate refuses a path that is a symbolic link, belongs to another
// user, or may be written by others: a record there could have been put by
// someone else, to have this daemon signal a process of their choosing.
func ownPrivate(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || fi.Mode()&os.ModeSymlink != 0 || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return errors.New("upstream: " + path + " is not a private file of this user's; not acted on")
	}
	return nil
}

// openRecord creates (or empties) path, a record file only this daemon
// names, in a directory only its user may write.
func openRecord(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
}
