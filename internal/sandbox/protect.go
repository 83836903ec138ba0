package sandbox

import (
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Protected is one piece of clawd's own state that the file tools must not
// reach even when it lies inside the workspace (a workspace of $HOME holds
// the data directory, the config file and the token files).
//
// Path is an absolute host path. For a file item it may end in "*": then
// every entry of that directory whose name starts with the text before the
// "*" is protected (the token file, the per-client credential files next to
// it and the temp files they are written through). Why says, in words a
// model and a human can act on, what the item is.
type Protected struct {
	Path string
	Why  string
}

// ProtectedSet is what a Guard protects: single files (which need not exist
// yet: a config file that does not exist would still be hot-loaded if
// created) and directories, of which everything below is protected.
// Adding an item later is one more element in one of the lists.
type ProtectedSet struct {
	Files []Protected
	Dirs  []Protected
}

// Guard decides whether an object a file tool reached is clawd's own state.
//
// It decides by identity (device and inode of what the tool actually
// opened), never by the path the caller gave, so a symlink, a hard link, a
// "../" detour or an absolute spelling lead to the same answer. It knows:
//
//   - ids: the identity of every protected file and directory and of every
//     entry below a protected directory (recursively, bounded);
//   - names: per directory identity, the names (or name prefixes) that are
//     protected in it, so that a protected file that does not exist yet (the
//     config file, the next token file) cannot be created by a tool, and a
//     search skips it by name even before it has an inode.
//
// Only items inside the workspace matter: an item outside it is already out
// of every file tool's reach (os.Root). Whether an item is inside is decided
// when the snapshot is built, by comparing each ancestor's identity with the
// workspace root's. When no item is inside, Active is false and the tools
// skip every check: the common case costs nothing per call.
//
// The snapshot goes stale when clawd or the user changes the state (token
// rotation writes a new inode; SQLite creates clawd.db-wal; an editor
// replaces the config file). Every way an object becomes protected after
// the snapshot was built creates a directory entry for it, which sets the
// object's ctime: created in a protected directory, renamed or hard-linked
// into one (rename and link update the inode's ctime on Linux's file
// systems), or a protected directory made around it. So a check first
// compares the ctime of what the tool opened with the time the snapshot
// was last known current (built, or last validated): an older object is answered from the snapshot with no system call
// (the common case: files the model did not just write). A newer one makes
// the check stat the watched directories (those holding protected items,
// and the nearest existing ancestor of a missing one) and rebuild the
// snapshot if any changed identity, mtime or ctime, if one changed too
// recently for its coarse timestamp to be trusted, or if the snapshot is
// older than maxSnapshotAge, which bounds every other staleness (a
// directory renamed higher up). The comparison assumes file timestamps and
// time.Now come from the same clock: a backward step of the system clock
// can hide a new object for up to maxSnapshotAge.
type Guard struct {
	ws *Workspace

	mu sync.Mutex // serializes rebuilds and edits of set
	// retired holds objects that were protected in an earlier snapshot
	// and no longer are (a token file replaced by rotation), with when to
	// forget them; guarded by mu. See rebuildLocked.
	retired map[fid]retiredID
	set     ProtectedSet
	snap    atomic.Pointer[snapshot]
	// active is true when some item lies inside the workspace. It is read
	// on every tool call, so it is a plain atomic, not part of snap.
	active atomic.Bool
}

// retainRetired is how long an object stays protected after it left
// clawd's state (see rebuildLocked).
const retainRetired = time.Minute

type retiredID struct {
	why   string
	until time.Time
}

// maxSnapshotAge bounds how long a snapshot is trusted without a rebuild,
// whatever the watched directories say (a directory renamed higher up is
// not seen by them).
const maxSnapshotAge = 2 * time.Second

// racyWindow: a watched directory changed this recently may change again
// within the same timestamp tick, unseen; such a snapshot is rebuilt at the
// next check.
const racyWindow = 50 * time.Millisecond

// Scan bounds for a protected directory's entries. clawd's directories hold
// a handful of files; a tree larger than this is not clawd's own, and what
// lies beyond the bound is still refused by the name rules and by the
// directory's own identity for write_file and search.
const (
	maxScanEntries = 10000
	maxScanDepth   = 8
)

// fid is a file's identity.
type fid struct{ dev, ino uint64 }

// nameRule protects a path below a directory: path holds the components
// from that directory down to the item, usually one name. With prefix the
// last component is a name prefix; with dir the item is a directory, and
// everything below it is protected too. Rules of more than one component
// stand for items whose parent does not exist yet: they refuse exactly the
// creation of that path (create_parents), not of its first directory.
type nameRule struct {
	path   []string
	prefix bool
	dir    bool
	why    string
}

// match reports whether creating full (directories, then the file's name)
// below the rule's directory would create the protected item or something
// inside it.
func (r *nameRule) match(full []string) bool {
	n := len(r.path)
	if r.dir {
		return len(full) >= n && namesEqual(full[:n], r.path)
	}
	if len(full) != n || !namesEqual(full[:n-1], r.path[:n-1]) {
		return false
	}
	last, want := full[n-1], r.path[n-1]
	return nameEqual(last, want) || (r.prefix && len(last) >= len(want) && nameEqual(last[:len(want)], want))
}

// nameEqual compares names as the file system will: on macOS and Windows,
// whose usual file systems ignore case, "MCP-SERVER.TOML" names the config
// file too.
func nameEqual(a, b string) bool {
	if foldCase {
		return strings.EqualFold(a, b)
	}
	return a == b
}

func namesEqual(a, b []string) bool {
	return slices.EqualFunc(a, b, nameEqual)
}

// watched is a directory whose change invalidates the snapshot.
type watched struct {
	path  string
	state dirState
}

type snapshot struct {
	// ids holds every protected object: own (found by this snapshot's
	// scan) plus the guard's retired ones.
	ids   map[fid]string
	own   map[fid]bool
	names map[fid][]nameRule
	watch []watched
	built time.Time
	// valid is when the last check that found the watched directories
	// unchanged started (UnixNano): the snapshot is known current as of
	// then, and objects changed before it need no system call.
	valid  atomic.Int64
	racy   bool
	inside []string // the path of every item inside the workspace
}

// NewGuard builds a guard for ws over set and attaches it to ws, so every
// tool and the chain consult it.
func NewGuard(ws *Workspace, set ProtectedSet) *Guard {
	g := &Guard{ws: ws, set: set}
	g.mu.Lock()
	g.rebuildLocked()
	g.mu.Unlock()
	ws.guard.Store(g)
	return g
}

// Guard returns the workspace's guard, nil if none.
func (w *Workspace) Guard() *Guard { return w.guard.Load() }

// Add protects more items (a socket path known only when the unix
// transport starts) and rebuilds the snapshot.
func (g *Guard) Add(more ProtectedSet) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.set.Files = append(g.set.Files, more.Files...)
	g.set.Dirs = append(g.set.Dirs, more.Dirs...)
	g.rebuildLocked()
}

// Active reports whether any protected item lies inside the workspace.
// Tools check nothing when it is false.
func (g *Guard) Active() bool { return g != nil && g.active.Load() }

// Inside lists the protected items inside the workspace (their paths, a
// trailing "*" for a name prefix), for the startup warning.
func (g *Guard) Inside() []string {
	if g == nil {
		return nil
	}
	return g.current().inside
}

// current returns a snapshot that reflects the file system as of now.
func (g *Guard) current() *snapshot {
	s := g.snap.Load()
	start := time.Now()
	if !s.racy && start.Sub(s.built) < maxSnapshotAge && !s.changed() {
		s.valid.Store(start.UnixNano())
		return s
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if s2 := g.snap.Load(); s2 != s && !s2.racy && !s2.changed() {
		return s2 // another goroutine rebuilt it meanwhile
	}
	return g.rebuildLocked()
}

// view returns a snapshot that is current for the object fi: the published
// one without any system call when fi's ctime is older than the snapshot
// (see the type's comment), else current().
func (g *Guard) view(fi os.FileInfo) *snapshot {
	if s := g.snap.Load(); g.fresh(s, fi) {
		return s
	}
	return g.current()
}

// fresh reports whether s can answer for fi without a system call.
func (g *Guard) fresh(s *snapshot, fi os.FileInfo) bool {
	ct, ok := ctimeOf(fi)
	return ok && !s.racy && ct < s.valid.Load()-int64(racyWindow) && time.Since(s.built) < maxSnapshotAge
}

func (s *snapshot) changed() bool {
	for i := range s.watch {
		if statDir(s.watch[i].path) != s.watch[i].state {
			return true
		}
	}
	return false
}

// ObjectWhy returns why the object with identity fi (from an fstat of what a
// tool opened, or an lstat relative to an open directory) is protected, or
// "" if it is not.
func (g *Guard) ObjectWhy(fi os.FileInfo) string {
	if !g.Active() {
		return ""
	}
	id, ok := identity(fi)
	if !ok {
		return ""
	}
	return g.view(fi).ids[id]
}

// WhyRemoved is the refusal of an object that was unlinked between the
// tool's open and its check: it may have been clawd's state (a token file
// replaced by rotation an instant after the open), and an unlinked file
// can no longer be placed.
const WhyRemoved = "the file was deleted while it was being opened (clawd's token file is replaced this way on rotation); read it again"

// OpenWhy is ObjectWhy for an object the tool has open as f, with fi its
// fstat. When the answer needs a fresh snapshot, f is stat'ed again after
// it: if f has no name left by then, the snapshot could not have seen it
// where it was (a token file opened just before a rotation replaced it),
// and it is refused as WhyRemoved.
func (g *Guard) OpenWhy(f *os.File, fi os.FileInfo) string {
	if !g.Active() {
		return ""
	}
	id, ok := identity(fi)
	if !ok {
		return ""
	}
	s := g.snap.Load()
	if g.fresh(s, fi) {
		return s.ids[id]
	}
	s = g.current()
	if why := s.ids[id]; why != "" {
		return why
	}
	if after, err := f.Stat(); err != nil || unlinked(after) {
		return WhyRemoved
	}
	return ""
}

// NameWhy returns why the entry name of the directory dir (an fstat of the
// open directory) is protected, or "" if it is not: a protected file there
// by that name, existing or not, or dir itself protected.
func (g *Guard) NameWhy(dir os.FileInfo, name string) string {
	return g.CreateWhy(dir, []string{name})
}

func (s *snapshot) createWhy(dir fid, full []string) string {
	for i := range s.names[dir] {
		if r := &s.names[dir][i]; r.match(full) {
			return r.why
		}
	}
	return ""
}

// CreateWhy returns why creating the path full (missing directories, then
// a file name) below the existing directory dir would create clawd's state,
// or "" if it would not. write_file asks it before create_parents makes
// anything, so a refused call leaves nothing behind.
func (g *Guard) CreateWhy(dir os.FileInfo, full []string) string {
	if !g.Active() {
		return ""
	}
	id, ok := identity(dir)
	if !ok {
		return ""
	}
	s := g.view(dir)
	if why := s.createWhy(id, full); why != "" {
		return why
	}
	return s.ids[id]
}

// ProtectedViolation is the refusal of a path that reaches clawd's own
// state: a *Violation, so the caller gets -32005 with data.reason and the
// audit row becomes a Deny by the sandbox step with that reason.
func ProtectedViolation(p, why string) *Violation {
	if why == WhyRemoved {
		return &Violation{Path: p, Reason: why}
	}
	return &Violation{Path: p, Reason: "protected: " + why + "; file tools never read or write clawd's own state, even inside the workspace"}
}
