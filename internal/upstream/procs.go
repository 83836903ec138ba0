package upstream

import (
	"encoding/json"
	"errors"
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
// (Options.ProcFile): pid, process group and start time, with the boot id
// and clawd's own pid and start time. After clawd was killed, the next
// start reads the files of daemons that no longer run (SweepRecorded) and
// ends each recorded process that still runs, recognised by pid and start
// time together, so a pid reused by an unrelated process is never touched.

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
	rec := procRecord{Server: server, Pid: p.Pid(), Pgid: p.Pid()}
	rec.Start = startTime(p.Pid())
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
	sort.Slice(list, func(i, j int) bool { return list[i].Pid < list[j].Pid })
	self := os.Getpid()
	f := procFile{BootID: proc.BootID(), Clawd: procRecord{Pid: self, Start: startTime(self)}, Procs: list}
	b, _ := json.Marshal(f)
	err := fileutil.MkdirPrivate(filepath.Dir(m.opts.ProcFile))
	if err == nil {
		// No sync: the record is only read within the same boot (BootID),
		// and a crash of the machine ends every process it lists.
		err = fileutil.WriteAtomicVolatile(m.opts.ProcFile, b, 0o600)
	}
	if err != nil {
		m.opts.Logger.Warn("upstream: recording the running servers failed; after a kill -9 only the owner token finds them", "file", m.opts.ProcFile, "err", err)
	}
}

// ProcFileFor is the record file of the daemon with pid in dir (one file
// per daemon, so two daemons of one workspace never overwrite each other's).
func ProcFileFor(dir string, pid int) string {
	return filepath.Join(dir, strconv.Itoa(pid)+".json")
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
