package upstream

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/proc"
)

// Every stdio child is a spawn with an id unique in this clawd process. Its
// mark (OwnerEnv, inherited by everything it starts) is
// "TOKEN.CLAWDPID.SPAWN", so a process adopted later (an orphan of the
// upstream's, see proc.ReapAdopted) can be traced to the spawn it came
// from, and ended once that spawn's server has exited (EndAdopted).
//
// While a spawn's process runs, the manager that started it persists it
// (Options.ProcFile): pid, process group, start time and session, with the
// boot id and clawd's own pid and start time. The bash tool's running calls
// are recorded the same way (GroupRecorder). After clawd was killed, the
// next start reads the files of daemons that no longer run (SweepRecorded)
// and ends each recorded process that still runs, recognised by pid and
// start time together, so a pid reused by an unrelated process is never
// touched, and the members of a recorded group whose leader is gone.

var spawnSeq atomic.Uint64

// spawnRec is one running stdio child.
type spawnRec struct {
	m      *Manager
	server string
	p      *proc.Process
	rec    procRecord // Start is 0 where start times cannot be read
}

var spawns = struct {
	mu   sync.Mutex
	live map[uint64]*spawnRec
}{live: map[uint64]*spawnRec{}}

// spawnLive reports whether spawn id's process still runs.
func spawnLive(id uint64) bool {
	spawns.mu.Lock()
	r := spawns.live[id]
	spawns.mu.Unlock()
	if r == nil {
		return false
	}
	select {
	case <-r.p.Exited():
		return false
	default:
		return true
	}
}

func (m *Manager) spawnStarted(id uint64, server string, p *proc.Process) {
	rec := leaderRecord(server, p.Pid())
	spawns.mu.Lock()
	spawns.live[id] = &spawnRec{m: m, server: server, p: p, rec: rec}
	spawns.mu.Unlock()
	m.persistProcs()
}

func (m *Manager) spawnEnded(id uint64) {
	spawns.mu.Lock()
	r := spawns.live[id]
	delete(spawns.live, id)
	spawns.mu.Unlock()
	if r != nil {
		m.persistProcs()
		proc.Rescan() // what it left to clawd may be ended now
	}
}

// procFile is what Options.ProcFile holds.
type procFile struct {
	BootID string       `json:"boot_id"`
	Clawd  procRecord   `json:"clawd"` // the daemon itself
	Procs  []procRecord `json:"procs"`
}

type procRecord struct {
	Server string `json:"server,omitempty"`
	Pid    int    `json:"pid"`
	Pgid   int    `json:"pgid,omitempty"`
	Start  uint64 `json:"start"` // clock ticks after boot, /proc/PID/stat
	// Sid is the session of the group's leader when it was recorded; nil
	// where it is unknown (records of older versions, a leader whose stat
	// could not be read). With it the sweep also ends the members of a
	// group whose leader already died (SweepRecorded). Session 0 is a real
	// session: the one a container's processes share when their runtime
	// started them without setsid.
	Sid *int `json:"sid,omitempty"`
}

// startTime is pid's start time in clock ticks after boot (0 if unknown:
// such a record is never acted on).
func startTime(pid int) uint64 {
	start, _, _ := startAndSession(pid)
	return start
}

// leaderRecord is the record of pid, a process that leads its own group,
// read while pid cannot have been reused (the caller has not reaped it).
func leaderRecord(server string, pid int) procRecord {
	start, sid, ok := startAndSession(pid)
	r := procRecord{Server: server, Pid: pid, Pgid: pid, Start: start}
	if ok {
		r.Sid = &sid
	}
	return r
}

// persistProcs writes the manager's running stdio children to
// Options.ProcFile, or removes the file when none runs. Writes are
// serialized and each writes the set as it is then.
func (m *Manager) persistProcs() {
	if m.opts.ProcFile == "" || !recordsUsed {
		return
	}
	m.procMu.Lock()
	defer m.procMu.Unlock()
	spawns.mu.Lock()
	var list []procRecord
	for _, r := range spawns.live {
		if r.m == m {
			list = append(list, r.rec)
		}
	}
	spawns.mu.Unlock()
	if len(list) == 0 {
		if err := os.Remove(m.opts.ProcFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			m.opts.Logger.Warn("upstream: removing the record of running servers failed", "file", m.opts.ProcFile, "err", err)
		}
		return
	}
	if err := writeProcFile(m.opts.ProcFile, list); err != nil {
		m.opts.Logger.Warn("upstream: recording the running servers failed; after a kill -9 only the owner token finds them", "file", m.opts.ProcFile, "err", err)
	}
}

// writeProcFile writes list, this daemon's running process groups, to
// file (a procFile).
func writeProcFile(file string, list []procRecord) error {
	sort.Slice(list, func(i, j int) bool { return list[i].Pid < list[j].Pid })
	self := os.Getpid()
	f := procFile{BootID: proc.BootID(), Clawd: procRecord{Pid: self, Start: startTime(self)}, Procs: list}
	b, _ := json.Marshal(f)
	err := fileutil.MkdirPrivate(filepath.Dir(file))
	if err == nil {
		// No sync: the record is only read within the same boot (BootID),
		// and a crash of the machine ends every process it lists.
		err = fileutil.WriteAtomicVolatile(file, b, 0o600)
	}
	return err
}

// GroupRecorder records process groups other than the stdio servers' (the
// bash tool's calls), in the format and directory of the servers' records,
// so that SweepRecorded ends what a call left running when the daemon was
// killed. Each running group has a file of its own, one of a pool
// (ProcFileFor(dir, daemon pid, "bash-N")) kept open while the daemon
// runs: a call writes its group's record over the file's content when its
// shell has started and, once the group is gone, a record of no group, one
// write each, where a file created and removed per call cost a create and
// an unlink (a few tens of microseconds each). The pool holds as many
// files as calls ever ran at once; Close removes them. Its methods are
// safe for concurrent use.
type GroupRecorder struct {
	dir    string
	logger *slog.Logger
	once   sync.Once
	head   procFile // the boot and this daemon, the same in every file
	empty  []byte   // head with no group: a free file's content

	mu     sync.Mutex
	free   []*recordSlot
	made   int  // files made so far: the next one's number
	closed bool // Close ran: a file given back is removed
}

// recordSlot is one file of the pool.
type recordSlot struct {
	f    *os.File
	size int // the longest content written: shorter ones are padded to it
}

// write puts b in place of the file's content. JSON allows the trailing
// spaces that pad a shorter record over a longer one. Not synced: see
// writeProcFile; what is written is seen by any later reader at once.
func (s *recordSlot) write(b []byte) error {
	if pad := s.size - len(b); pad > 0 {
		b = append(b, strings.Repeat(" ", pad)...)
	}
	if _, err := s.f.WriteAt(b, 0); err != nil {
		return err
	}
	s.size = len(b)
	return nil
}

// NewGroupRecorder records in dir, the servers' record directory. A nil
// logger discards the warning a failed write gives.
func NewGroupRecorder(dir string, logger *slog.Logger) *GroupRecorder {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &GroupRecorder{dir: dir, logger: logger}
}

// Started records the group led by pid, a child the caller started in a
// group of its own and has not reaped yet (so the pid is still that
// child's). The returned function drops the record; call it once the group
// has been killed (proc.Process.Wait). Where records are not read (not
// Linux) it records nothing.
func (g *GroupRecorder) Started(pid int) (forget func()) {
	if g == nil || !recordsUsed {
		return func() {}
	}
	g.once.Do(func() {
		self := os.Getpid()
		g.head = procFile{BootID: proc.BootID(), Clawd: procRecord{Pid: self, Start: startTime(self)}}
		g.empty, _ = json.Marshal(g.head)
	})
	f := g.head
	f.Procs = []procRecord{leaderRecord("", pid)}
	b, _ := json.Marshal(f)
	s, err := g.take()
	if err == nil {
		if err = s.write(b); err != nil {
			g.drop(s)
		}
	}
	if err != nil {
		g.logger.Warn("recording a running process group failed; after a kill -9 of clawd what it leaves is not ended", "dir", g.dir, "err", err)
		return func() {}
	}
	var once sync.Once
	return func() {
		// A record left by a kill -9 before this names a group that is
		// gone, which the sweep finds empty.
		once.Do(func() {
			if err := s.write(g.empty); err != nil {
				g.logger.Warn("clearing the record of a process group failed", "file", s.f.Name(), "err", err)
				g.drop(s)
				return
			}
			g.give(s)
		})
	}
}

// take returns a free file of the pool, or a new one.
func (g *GroupRecorder) take() (*recordSlot, error) {
	g.mu.Lock()
	if n := len(g.free); n > 0 {
		s := g.free[n-1]
		g.free = g.free[:n-1]
		g.mu.Unlock()
		return s, nil
	}
	n := g.made
	g.made++
	g.mu.Unlock()
	path := procFileName(g.dir, g.head.Clawd.Pid, g.head.Clawd.Start, "bash-"+strconv.Itoa(n))
	f, err := openRecord(path)
	if errors.Is(err, os.ErrNotExist) {
		if err = fileutil.MkdirPrivate(g.dir); err == nil {
			f, err = openRecord(path)
		}
	}
	if err != nil {
		return nil, err
	}
	return &recordSlot{f: f}, nil
}

// give returns s, which records no group, to the pool.
func (g *GroupRecorder) give(s *recordSlot) {
	g.mu.Lock()
	closed := g.closed
	if !closed {
		g.free = append(g.free, s)
	}
	g.mu.Unlock()
	if closed {
		g.drop(s)
	}
}

// drop closes and removes s's file.
func (g *GroupRecorder) drop(s *recordSlot) {
	s.f.Close()
	if err := os.Remove(s.f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		g.logger.Warn("removing the record of a process group failed", "file", s.f.Name(), "err", err)
	}
}

// Close removes the pool's files, and each file in use once its call
// gives it back. The recorder still records after it, with a file per
// call.
func (g *GroupRecorder) Close() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.closed = true
	free := g.free
	g.free = nil
	g.mu.Unlock()
	for _, s := range free {
		g.drop(s)
	}
}

// ProcFileFor is the record file of the daemon with pid in dir, for what
// ("" for the stdio servers, "bash-N" for a file of GroupRecorder's pool),
// named by the daemon's pid and its start time, so two daemons of one
// workspace never overwrite each other's, and neither does a daemon that got
// the pid of a killed one whose file the sweep has not read yet.
func ProcFileFor(dir string, pid int, what string) string {
	return procFileName(dir, pid, startTime(pid), what)
}

// procFileName is ProcFileFor of the daemon with pid started at start.
func procFileName(dir string, pid int, start uint64, what string) string {
	name := strconv.Itoa(pid) + "-" + strconv.FormatUint(start, 10)
	if what != "" {
		name += "-" + what
	}
	return filepath.Join(dir, name+".json")
}

// parseProcFileName is procFileName's inverse on a file's base name: the
// daemon's pid and start time; ok is false for a name of another shape.
func parseProcFileName(name string) (pid int, start uint64, ok bool) {
	base, isJSON := strings.CutSuffix(name, ".json")
	pidPart, rest, _ := strings.Cut(base, "-")
	startPart, _, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidPart)
	start, err2 := strconv.ParseUint(startPart, 10, 64)
	return pid, start, isJSON && err == nil && err2 == nil && pid > 0 && start != 0
}

// parseMark splits an OwnerEnv value of token into the pid of the clawd
// that started the process and the spawn id (0 in a mark without one, as
// written by older versions); ok is false for another token's or a
// malformed mark.
func parseMark(value, token string) (clawd int, spawn uint64, ok bool) {
	rest, ok := strings.CutPrefix(value, token+".")
	if !ok || token == "" {
		return 0, 0, false
	}
	pidPart, spawnPart, hasSpawn := strings.Cut(rest, ".")
	clawd, err := strconv.Atoi(pidPart)
	if err != nil || clawd <= 0 || pidPart != strconv.Itoa(clawd) {
		return 0, 0, false
	}
	if hasSpawn {
		spawn, err = strconv.ParseUint(spawnPart, 10, 64)
		if err != nil || spawn == 0 || spawnPart != strconv.FormatUint(spawn, 10) {
			return 0, 0, false
		}
	}
	return clawd, spawn, true
}
