package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// rebuildLocked builds and publishes a new snapshot from the configured
// host paths. Those paths are how clawd itself finds its state; the
// decisions the snapshot then makes are by identity.
func (g *Guard) rebuildLocked() *snapshot {
	s := &snapshot{ids: map[fid]string{}, own: map[fid]bool{}, names: map[fid][]nameRule{}, built: time.Now()}
	s.valid.Store(s.built.UnixNano())
	b := &builder{s: s, root: g.ws.Dir, seen: map[string]bool{}, inside: map[string]bool{}, fs: newLookups()}
	b.rootID, b.rootOK = b.fs.statID(g.ws.Dir)
	for _, it := range g.set.Dirs {
		b.addDir(it)
	}
	// Files after directories: a file's own reason is more precise than
	// its directory's.
	for _, it := range g.set.Files {
		b.addFile(it)
	}
	now := time.Now()
	for _, w := range s.watch {
		if w.state.recent(now) {
			s.racy = true
		}
	}
	g.retireLocked(s, now)
	g.active.Store(len(s.inside) > 0)
	g.snap.Store(s)
	return s
}

// builder fills one snapshot.
type builder struct {
	s      *snapshot
	root   string
	rootID fid
	rootOK bool
	seen   map[string]bool // watched directories
	// inside memoizes insideByIdentity by canonical path: the items share
	// their ancestors (the home directory, say), which are stat'ed once
	// per snapshot instead of once per item.
	inside map[string]bool
	fs     *lookups
}

// watch adds dir to the directories whose change invalidates the snapshot.
func (b *builder) watch(dir string) {
	if !b.seen[dir] {
		b.seen[dir] = true
		b.s.watch = append(b.s.watch, watched{path: dir, state: statDir(dir)})
	}
}

func (b *builder) in(p string) bool {
	return b.rootOK && insideByIdentityMemo(b.rootID, p, b.inside, b.fs)
}

// addDir adds a directory item: the directory and everything below it,
// and its name in its parent.
func (b *builder) addDir(it Protected) {
	s := b.s
	dir := b.fs.canonical(it.Path)
	parent, rest, exists := b.fs.nearest(dir)
	parentIn := parent != "" && b.in(parent)
	// The directory itself may be the workspace root, or hold it (a
	// workspace inside the data directory is clawd's state whole).
	dirIn := exists && (b.in(dir) || holdsRoot(dir, b.root, b.fs))
	if !parentIn && !dirIn {
		return
	}
	s.inside = append(s.inside, dir)
	if parentIn {
		b.watch(parent)
		if pid, ok := b.fs.statID(parent); ok {
			s.names[pid] = append(s.names[pid], nameRule{path: rest, dir: true, why: it.Why})
		}
	}
	if exists {
		s.scanDir(dir, it.Why, b.watch)
	}
}

// addFile adds a file item (a name, or a name prefix with "*") in its
// directory.
func (b *builder) addFile(it Protected) {
	s := b.s
	prefix := strings.HasSuffix(it.Path, "*")
	raw := strings.TrimSuffix(it.Path, "*")
	if prefix && strings.HasSuffix(raw, string(filepath.Separator)) {
		return // "dir/*" belongs in Dirs; refuse to guess
	}
	name := filepath.Base(raw)
	dir := b.fs.canonical(filepath.Dir(raw))
	if !prefix {
		// The file itself may be a symlink (to the real config, say):
		// its target is protected too.
		if t, err := b.fs.evalSymlinks(raw); err == nil && t != filepath.Join(dir, name) {
			if id, ok := b.fs.statID(t); ok {
				s.ids[id] = it.Why
			}
		}
	}
	// parent: the file's directory if it exists, else its nearest
	// existing ancestor; rest: the components from there to the file.
	parent, rest, exists := dir, []string{name}, true
	if fi, err := b.fs.stat(dir); err != nil || !fi.IsDir() {
		parent, rest, _ = b.fs.nearest(dir)
		rest, exists = append(rest, name), false
	}
	if parent == "" || !b.in(parent) {
		return
	}
	s.inside = append(s.inside, it.Path)
	b.watch(parent)
	pid, ok := b.fs.statID(parent)
	if !ok {
		return
	}
	// Refuse creating exactly this path: the name in its directory,
	// or, while that directory is missing, the whole path to it.
	s.names[pid] = append(s.names[pid], nameRule{path: rest, prefix: prefix, why: it.Why})
	if !exists {
		return
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if n == name || (prefix && strings.HasPrefix(n, name)) {
			full := filepath.Join(dir, n)
			if id, ok := lstatID(full); ok {
				s.ids[id] = it.Why
			}
			if id, ok := statID(full); ok {
				s.ids[id] = it.Why
			}
		}
	}
}

// retireLocked keeps protecting, for retainRetired, every object the
// previous snapshot protected and this one does not. A tool may have
// opened the token file an instant before a rotation replaced it, and
// check it an instant after a rebuild that no longer lists it: that file
// still holds a token that is accepted until it expires. The cost is that
// a workspace file given a retired inode number by the file system is
// refused for up to a minute (a false refusal, never a leak).
func (g *Guard) retireLocked(s *snapshot, now time.Time) {
	if g.retired == nil {
		g.retired = map[fid]retiredID{}
	}
	for id := range s.ids {
		s.own[id] = true
	}
	if old := g.snap.Load(); old != nil {
		for id := range old.own {
			if why, still := s.ids[id]; !still {
				why = old.ids[id]
				if _, known := g.retired[id]; !known {
					g.retired[id] = retiredID{why: why, until: now.Add(retainRetired)}
				}
			}
		}
	}
	for id, r := range g.retired {
		switch {
		case now.After(r.until):
			delete(g.retired, id)
		case s.own[id]:
			delete(g.retired, id) // protected again in its own right
		default:
			s.ids[id] = r.why
		}
	}
}

// scanDir records dir and everything below it (not following symlinks),
// bounded by maxScanEntries and maxScanDepth, and watches every directory
// it reads.
func (s *snapshot) scanDir(dir, why string, watch func(string)) {
	if id, ok := statID(dir); ok {
		s.ids[id] = why
	}
	n := 0
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		watch(d)
		ents, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range ents {
			if n >= maxScanEntries {
				return
			}
			n++
			p := filepath.Join(d, e.Name())
			if id, ok := lstatID(p); ok {
				s.ids[id] = why
			}
			if e.IsDir() && depth < maxScanDepth {
				walk(p, depth+1)
			}
		}
	}
	walk(dir, 1)
}

// nearest returns the nearest existing directory at or above p's parent,
// the components from it down to p (just p's base when the parent exists),
// and whether p itself exists. parent is "" when nothing exists.
func (l *lookups) nearest(p string) (parent string, rest []string, exists bool) {
	if _, err := l.lstat(p); err == nil {
		return filepath.Dir(p), []string{filepath.Base(p)}, true
	}
	rest = []string{filepath.Base(p)}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if fi, err := l.stat(d); err == nil && fi.IsDir() {
			return d, rest, false
		}
		if filepath.Dir(d) == d {
			return "", nil, false
		}
		rest = append([]string{filepath.Base(d)}, rest...)
	}
}

// insideByIdentity reports whether dir is the workspace root or below it:
// dir's symlinks are resolved, then each ancestor, from dir up to "/", is
// compared with the root by device and inode, so a root reached through
// another spelling (a symlink, a bind of the same directory) still matches.
func insideByIdentity(root fid, dir string) bool {
	return insideByIdentityMemo(root, dir, nil, nil)
}

// insideByIdentityMemo is insideByIdentity with the answers for dir's
// ancestors remembered in memo (nil: none), for one root, and the look-ups
// made through l (nil: none remembered).
func insideByIdentityMemo(root fid, dir string, memo map[string]bool, l *lookups) bool {
	canon, err := l.evalSymlinks(dir)
	if err != nil {
		canon = dir
	}
	var walked []string
	answer := false
	for p := canon; ; p = filepath.Dir(p) {
		if in, ok := memo[p]; ok {
			answer = in
			break
		}
		walked = append(walked, p)
		if id, ok := l.statID(p); ok && id == root {
			answer = true
			break
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	if memo != nil {
		// Every directory walked has the answer of the one that decided:
		// below the root means inside; above it or beside it means not.
		for _, p := range walked {
			memo[p] = answer
		}
	}
	return answer
}

// canonical resolves the symlinks of the longest existing prefix of p, so
// an item configured through a symlink is judged where it really is.
func (l *lookups) canonical(p string) string {
	p = filepath.Clean(p)
	if r, err := l.evalSymlinks(p); err == nil {
		return r
	}
	d := filepath.Dir(p)
	if d == p {
		return p
	}
	return filepath.Join(l.canonical(d), filepath.Base(p))
}

// holdsRoot reports whether the workspace root lies below dir, by walking
// up from the root comparing each ancestor's identity with dir's.
func holdsRoot(dir, root string, l *lookups) bool {
	id, ok := l.statID(dir)
	return ok && insideByIdentityMemo(id, root, nil, l)
}

func statID(p string) (fid, bool) { return (*lookups)(nil).statID(p) }

func lstatID(p string) (fid, bool) { return (*lookups)(nil).lstatID(p) }

// lookups remembers the file system look-ups of one snapshot build: the
// protected items share their directories and ancestors (the home
// directory, the data directory), which are then asked about once per
// build instead of once per item and question. A snapshot is a picture of
// one moment (its watched directories say when it went stale), so reusing
// an answer within one build loses nothing. A nil *lookups remembers
// nothing.
type lookups struct {
	stats, lstats map[string]statResult
	evals         map[string]evalResult
}

type statResult struct {
	fi  os.FileInfo
	err error
}

type evalResult struct {
	path string
	err  error
}

func newLookups() *lookups {
	return &lookups{stats: map[string]statResult{}, lstats: map[string]statResult{}, evals: map[string]evalResult{}}
}

func (l *lookups) stat(p string) (os.FileInfo, error) {
	if l == nil {
		return os.Stat(p)
	}
	return remember(l.stats, p, os.Stat)
}

func (l *lookups) lstat(p string) (os.FileInfo, error) {
	if l == nil {
		return os.Lstat(p)
	}
	return remember(l.lstats, p, os.Lstat)
}

// remember answers p from m, asking look the first time.
func remember(m map[string]statResult, p string, look func(string) (os.FileInfo, error)) (os.FileInfo, error) {
	r, ok := m[p]
	if !ok {
		r.fi, r.err = look(p)
		m[p] = r
	}
	return r.fi, r.err
}

func (l *lookups) evalSymlinks(p string) (string, error) {
	if l == nil {
		return filepath.EvalSymlinks(p)
	}
	r, ok := l.evals[p]
	if !ok {
		r.path, r.err = filepath.EvalSymlinks(p)
		l.evals[p] = r
	}
	return r.path, r.err
}

func (l *lookups) statID(p string) (fid, bool) {
	fi, err := l.stat(p)
	if err != nil {
		return fid{}, false
	}
	return identity(fi)
}

func (l *lookups) lstatID(p string) (fid, bool) {
	fi, err := l.lstat(p)
	if err != nil {
		return fid{}, false
	}
	return identity(fi)
}
