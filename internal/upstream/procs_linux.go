package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/clawde/clawd/internal/support/proc"
)

// recordsUsed: SweepRecorded reads the records persistProcs writes.
const recordsUsed = true

// startTime is pid's start time in clock ticks after boot (0 if unknown:
// such a record is never acted on).
func startTime(pid int) uint64 {
	st, err := proc.ReadStat(pid)
	if err != nil {
		return 0
	}
	return st.Start
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

// SweepRecorded ends the stdio upstreams recorded in dir (ProcFileFor
// files) by daemons that no longer run, and removes their files; files of
// running daemons are left alone. A recorded process is ended only if its
// pid still names a process with the recorded start time, in the same boot
// (a reused pid is another process and is never touched); if it still
// leads the recorded process group, the group is ended with it (while its
// leader lives, a group id cannot have been reused). Processes of the group
// whose leader already died are left to SweepOrphans, which finds them by
// their mark. It returns the pids it ended.
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
			os.Remove(path) // not ours to act on, and of no use
			continue
		}
		if f.Clawd.Pid == self && f.Clawd.Start == startTime(self) {
			continue // our own
		}
		if f.BootID == boot && f.Clawd.Start != 0 && startTime(f.Clawd.Pid) == f.Clawd.Start {
			continue // that daemon still runs: these are its servers
		}
		if f.BootID == boot && boot != "" {
			for _, r := range f.Procs {
				if endRecorded(r, f.Clawd.Start, spare) {
					ended = append(ended, r.Pid)
				}
			}
		}
		os.Remove(path)
	}
	return ended, errors.Join(errs...)
}

// endRecorded ends r's process (and its group, while it leads it) if r's
// pid still names the process started at r.Start. A record is only a claim,
// so it also spares what no server of a daemon started at daemonStart can
// be: a process started before the daemon, and the sweeping process, its
// ancestors and the members of its group (spare).
func endRecorded(r procRecord, daemonStart uint64, spare sweeper) bool {
	if r.Pid <= 1 || r.Start == 0 || r.Start < daemonStart || spare.pids[r.Pid] {
		return false
	}
	st, err := proc.ReadStat(r.Pid)
	if err != nil || st.Start != r.Start || st.Pgid == spare.pgid || spare.pids[st.Pgid] {
		return false
	}
	if r.Pgid == r.Pid && st.Pgid == r.Pid {
		syscall.Kill(-r.Pid, syscall.SIGKILL)
	}
	return syscall.Kill(r.Pid, syscall.SIGKILL) == nil
}

// sweeper is what SweepRecorded never signals: the sweeping process and its
// ancestors (pids), and its process group (pgid).
type sweeper struct {
	pids map[int]bool
	pgid int
}

func sweeperLine(self int) sweeper {
	s := sweeper{pids: map[int]bool{}, pgid: syscall.Getpgrp()}
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
