package builtin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/clawde/clawd/internal/sandbox"
)

// The walk: GOMAXPROCS workers share a stack of work items, each either
// "read this subdirectory" or "search these files of that directory".
// Every directory is an *os.Root opened from its parent's Root with one path
// component, and its files are opened relative to it, so no open ever
// resolves more than one name and none can leave the workspace. A directory
// handle is reference-counted by the items that still need it and closed
// when the last is done; with the stack's depth-first order few are open at
// once. Entries are pushed in reverse name order so the walk runs roughly
// in path order, which lets the collector's cutoff (see collector) turn
// most files into count-only scans early.

// fileBatch is how many files one work item holds: small enough to balance
// big directories across workers, large enough to keep the stack cheap.
const fileBatch = 16

// binarySniff is how much of a file is checked for a NUL byte (as git and
// ripgrep's heuristics) to decide that it is binary and skip it.
const binarySniff = 8 << 10

// dirNode is an open directory of the walk.
type dirNode struct {
	root *os.Root
	// info is this directory's fstat, kept only when clawd's state lies
	// inside the workspace (the guard judges names by it).
	info   os.FileInfo
	rel    string // path relative to the workspace root; "" for the root itself
	srel   string // path relative to the search root; "" for the search root
	rules  ignoreRules
	depth  int // components in rel
	refs   atomic.Int32
	shared bool // root is the workspace's own handle: never close it
}

func (d *dirNode) release() {
	if d.refs.Add(-1) == 0 && !d.shared {
		d.root.Close()
	}
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// dirEntry is a directory entry with its type bits (fs.ModeType).
type dirEntry struct {
	name string
	typ  fs.FileMode
}

type workItem struct {
	dir   *dirNode
	sub   string   // a subdirectory of dir to read, or
	files []string // files of dir to search
}

// walker runs one search over a directory tree.
type walker struct {
	ctx     context.Context
	m       matcher
	glob    *globFilter
	maxSize int64
	col     *collector
	// guard keeps clawd's own state out of the results (nil or inactive:
	// no check at all).
	guard *sandbox.Guard

	mu     sync.Mutex
	cond   *sync.Cond
	stack  []workItem
	active int

	total atomic.Int64
}

func newWalker(ctx context.Context, m matcher, glob *globFilter, maxSize int64, col *collector) *walker {
	w := &walker{ctx: ctx, m: m, glob: glob, maxSize: maxSize, col: col}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// run searches the tree below root (already open; its ignore rules from
// the ancestors are in root.rules) and returns when the walk is done or
// ctx is cancelled.
func (w *walker) run(root *dirNode) {
	// Wake idle workers on cancellation so they notice it.
	stop := context.AfterFunc(w.ctx, func() {
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	root.refs.Store(1)
	w.active = 1 // the root directory is being read right here
	ws := &workerState{w: w}
	w.readDir(ws, root)
	w.finishItem()

	n := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		st := ws
		if i > 0 {
			st = &workerState{w: w}
		}
		wg.Go(func() { w.work(st) })
	}
	wg.Wait()
}

func (w *walker) push(items ...workItem) {
	w.mu.Lock()
	w.stack = append(w.stack, items...)
	if len(items) == 1 {
		w.cond.Signal()
	} else {
		w.cond.Broadcast()
	}
	w.mu.Unlock()
}

func (w *walker) finishItem() {
	w.mu.Lock()
	w.active--
	if w.active == 0 && len(w.stack) == 0 {
		w.cond.Broadcast()
	}
	w.mu.Unlock()
}

func (w *walker) work(st *workerState) {
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && w.active > 0 && w.ctx.Err() == nil {
			w.cond.Wait()
		}
		if len(w.stack) == 0 {
			w.mu.Unlock()
			return // done, or cancelled with nothing left to release
		}
		it := w.stack[len(w.stack)-1]
		w.stack[len(w.stack)-1] = workItem{}
		w.stack = w.stack[:len(w.stack)-1]
		w.active++
		w.mu.Unlock()

		if w.ctx.Err() == nil {
			if it.files != nil {
				for _, name := range it.files {
					if w.ctx.Err() != nil {
						break
					}
					st.searchFile(it.dir, name)
				}
			} else if child := w.openDir(it.dir, it.sub); child != nil {
				w.readDir(st, child)
			}
		}
		it.dir.release()
		w.finishItem()
	}
}

// openDir opens the subdirectory name of parent, or returns nil if it
// cannot be read (it is then skipped, like a directory ripgrep cannot read).
// The name was a directory when listed; sandbox.OpenDir makes a named pipe
// swapped in since fail at once instead of blocking the walk.
func (w *walker) openDir(parent *dirNode, name string) *dirNode {
	r, err := sandbox.OpenDir(parent.root, name)
	if err != nil {
		return nil
	}
	d := &dirNode{root: r, rel: joinRel(parent.rel, name), srel: joinRel(parent.srel, name), rules: parent.rules, depth: parent.depth + 1}
	d.refs.Store(1)
	return d
}

// readDir lists d, extends the ignore rules by d's ignore files, and pushes
// work for the entries that are neither ignored nor filtered out. It drops
// the reference the caller holds on d.
func (w *walker) readDir(st *workerState, d *dirNode) {
	defer d.release()
	f, err := d.root.Open(".")
	if err != nil {
		return
	}
	if st.direntBuf == nil {
		st.direntBuf = make([]byte, 32<<10)
	}
	if w.guard.Active() {
		fi, err := f.Stat()
		if err != nil || w.guard.OpenWhy(f, fi) != "" {
			f.Close()
			return // a protected directory: skipped whole
		}
		d.info = fi
	}
	ents, err := readDirEntries(f, d.root, st.direntBuf)
	f.Close()
	if err != nil && len(ents) == 0 {
		return
	}
	if d.info != nil {
		// Protected names (a token file, the config file) are skipped
		// before anything opens them.
		ents = slices.DeleteFunc(ents, func(e dirEntry) bool { return w.guard.NameWhy(d.info, e.name) != "" })
	}
	slices.SortFunc(ents, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	d.rules = loadIgnoreFiles(d, ents, w.guard)

	var items []workItem
	var files []string
	flush := func() {
		if len(files) > 0 {
			d.refs.Add(1)
			items = append(items, workItem{dir: d, files: files})
			files = nil
		}
	}
	// Entries whose path no tool could take as an argument (over
	// sandbox.MaxPathBytes, or directories below sandbox.MaxDepth) are not
	// searched: this also bounds the walk of a hostile, arbitrarily deep
	// tree (made with mkdirat, which has no depth limit).
	maxName := sandbox.MaxPathBytes - len(d.rel) - 1
	tooDeep := d.depth+1 >= sandbox.MaxDepth
	// Walk in reverse name order: the stack pops the smallest name first.
	for i := len(ents) - 1; i >= 0; i-- {
		// Checked at every entry: an entry's ignore and glob checks can
		// take milliseconds each on a long path, and the check is an
		// atomic load.
		if w.ctx.Err() != nil {
			// Cancelled in a huge directory: drop the items made so far.
			d.refs.Add(-int32(len(items)))
			return
		}
		name, t := ents[i].name, ents[i].typ
		if name == ".git" || len(name) > maxName {
			continue
		}
		switch {
		case t.IsDir():
			if tooDeep || d.rules.ignoredCtx(w.ctx, joinRel(d.rel, name), name, true) || !w.glob.allowDir(joinRel(d.srel, name), name) {
				continue
			}
			flush()
			d.refs.Add(1)
			items = append(items, workItem{dir: d, sub: name})
		case t.IsRegular():
			if d.rules.ignoredCtx(w.ctx, joinRel(d.rel, name), name, false) || !w.glob.allowFile(joinRel(d.srel, name), name) {
				continue
			}
			files = append(files, name)
			if len(files) == fileBatch {
				flush()
			}
		default:
			// Symlinks are not followed (as ripgrep without -L); devices,
			// sockets and FIFOs are not searched.
		}
	}
	flush()
	if len(items) > 0 {
		// Files of one batch were collected in reverse; search them in
		// name order.
		for _, it := range items {
			slices.Reverse(it.files)
		}
		w.push(items...)
	}
}

// loadIgnoreFiles returns d's rules extended by the ignore files among its
// entries; g keeps clawd's own state from being read as one.
func loadIgnoreFiles(d *dirNode, ents []dirEntry, g *sandbox.Guard) ignoreRules {
	h := ignoreFiles{guard: g}
	for _, e := range ents {
		switch e.name {
		case ".git":
			h.git, h.gitIsDir = true, e.typ.IsDir()
		case ".gitignore":
			h.gitignore = e.typ.IsRegular()
		case ".ignore":
			h.ignore = e.typ.IsRegular()
		}
	}
	return h.apply(d.rules, d.root, "", d.rel)
}

// ignoreFiles says which ignore-related entries a directory has.
type ignoreFiles struct {
	git, gitIsDir     bool // a .git entry (a worktree or submodule has a .git file)
	gitignore, ignore bool // regular .gitignore / .ignore files
	// guard, when active, refuses an ignore file that is clawd's own
	// state (a hard link to it, or a symlink swapped in after the
	// listing): its lines would become patterns, and which files are
	// skipped would tell what they say.
	guard *sandbox.Guard
}

// apply extends rules by the directory's ignore files, read from r at
// prefix+name; rel is the directory relative to the workspace root. A .git
// entry marks the root of a repository: the .gitignore files above it no
// longer apply (as in git, for a nested repository or submodule), and its
// .git/info/exclude does. Symlinked ignore files are not read, as git does
// not follow them.
func (h ignoreFiles) apply(rules ignoreRules, r *os.Root, prefix, rel string) ignoreRules {
	if h.git {
		rules.git = nil
		if h.gitIsDir {
			rules.git = rules.git.extend(r, prefix+".git/info/exclude", rel, h.guard)
		}
	}
	if h.gitignore {
		rules.git = rules.git.extend(r, prefix+".gitignore", rel, h.guard)
	}
	if h.ignore {
		rules.ignore = rules.ignore.extend(r, prefix+".ignore", rel, h.guard)
	}
	return rules
}

// maxIgnoreFile caps how much of an ignore file is read.
const maxIgnoreFile = 1 << 20

// maxIgnorePatterns bounds the patterns of one chain (the .gitignore files,
// or the .ignore files, from a directory up to its repository's root).
// Every pattern of the chain is tried against each entry below, and that
// check is not interruptible, so the chain's length is what one entry
// costs; the chain is also what the rules keep in memory. A repository can
// nest a 1 MiB ignore file (~200,000 patterns) in each of hundreds of
// directories for the price of one blob. Real projects have hundreds of
// patterns; past the bound, the rest of a file and the files below it
// are not read.
const maxIgnorePatterns = 10000

// extend returns l with the ignore file name of r (of directory base) as
// its new deepest level, or l itself when the file is missing or empty,
// is clawd's state (g), or the chain is full.
func (l *ignoreLevel) extend(r *os.Root, name, base string, g *sandbox.Guard) *ignoreLevel {
	room := maxIgnorePatterns - l.count()
	if room <= 0 {
		return l
	}
	pats, stars := readIgnoreFile(r, name, room, maxIgnoreStarStars-l.starCount(), g)
	if len(pats) == 0 {
		return l
	}
	return &ignoreLevel{parent: l, base: base, patterns: pats, total: l.count() + len(pats), stars: l.starCount() + stars}
}

// readIgnoreFile reads and parses at most limit patterns of an ignore file
// whose memoStars add up to at most stars (and returns how many they use),
// unless g says the file opened is clawd's own state.
func readIgnoreFile(r *os.Root, name string, limit, stars int, g *sandbox.Guard) ([]ignorePattern, int) {
	f, err := r.OpenFile(name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, 0
	}
	defer f.Close()
	// Size 0: a pseudo file (procfs, tracefs) whose read may block, as the
	// walk's own reads skip; an empty ignore file holds no pattern anyway.
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return nil, 0
	}
	if g.Active() && g.OpenWhy(f, st) != "" {
		return nil, 0
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile+1))
	if err != nil {
		return nil, 0
	}
	if len(data) > maxIgnoreFile {
		// Cut at the last whole line within the cap: a cut line is not
		// the pattern its file has ("*.log" cut to "*" ignores all).
		data = data[:bytes.LastIndexByte(data[:maxIgnoreFile], '\n')+1]
	}
	return parseIgnoreBudget(data, limit, stars)
}

// workerState is one worker's reusable memory: the file buffer and the
// match counter closure, so searching a file allocates nothing but its
// path (and, for files the collector wants, the kept matches).
type workerState struct {
	w         *walker
	buf       []byte
	direntBuf []byte // getdents buffer
	count     int64
	countFn   func(s, e int) bool
}

// maxKeptBuf is the largest buffer a worker keeps between files; one read
// of a bigger file is released after use.
const maxKeptBuf = 8 << 20

// searchFile searches the file name of d.
func (st *workerState) searchFile(d *dirNode, name string) {
	data, ok := st.readFile(d, name)
	if !ok {
		return
	}
	st.searchData(joinRel(d.rel, name), data)
	if cap(st.buf) > maxKeptBuf {
		st.buf = nil
	}
}

// searchData counts the matches in data and, if the collector still wants
// matches from this path, keeps the first ones with their text.
func (st *workerState) searchData(path string, data []byte) {
	w := st.w
	if !w.col.wants(path) {
		if st.countFn == nil {
			st.countFn = func(int, int) bool {
				st.count++
				// A literal scan has no checks of its own; a file dense
				// with matches takes long enough to need them.
				return st.count%cancelCheckMatches != 0 || w.ctx.Err() == nil
			}
		}
		st.count = 0
		w.m.scan(data, st.countFn)
		w.total.Add(st.count)
		return
	}
	hits, n := collectHits(w.ctx, w.m, path, data, w.col.k)
	w.total.Add(int64(n))
	if len(hits) > 0 {
		w.col.add(path, hits)
	}
}

// readFile reads a regular file into the worker's buffer. It returns false
// for files that are skipped: unreadable, not regular (a race replaced it),
// larger than the size limit, or binary.
func (st *workerState) readFile(d *dirNode, name string) ([]byte, bool) {
	// O_NONBLOCK: if the entry was swapped for a FIFO since it was listed,
	// the open must not wait for a writer; the regular-file check refuses it.
	f, err := d.root.OpenFile(name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 || fi.Size() > st.w.maxSize {
		// An empty file has nothing to match. Not reading it also keeps
		// the walk out of pseudo files (procfs, sysfs, tracefs), which
		// report size 0 and whose read can wait forever in the kernel
		// (/proc/kmsg, trace_pipe), past the time limit and any cancel.
		return nil, false
	}
	if d.info != nil && st.w.guard.OpenWhy(f, fi) != "" {
		return nil, false // clawd's state, e.g. a hard link to it
	}
	data, err := readText(f, &st.buf, fi.Size(), st.w.maxSize)
	if err != nil {
		return nil, false
	}
	return data, true
}

// errTooLarge reports a file that grew past the size limit while read;
// errBinary a file with a NUL byte in its first binarySniff bytes.
var (
	errTooLarge = errors.New("file larger than the search size limit")
	errBinary   = errors.New("binary file")
)

// firstRead is the most the first read of a file asks for, so that a large
// binary file is recognised (and dropped) before it is read whole.
const firstRead = 64 << 10

// readText reads f (whose size was size when stat'ed) into *buf, growing
// it as needed, and returns the contents, or errBinary as soon as the
// first binarySniff bytes are known to hold a NUL.
func readText(f *os.File, buf *[]byte, size, limit int64) ([]byte, error) {
	// One byte more than the size, so a file that did not change is read
	// to EOF without growing the buffer.
	want := int(size) + 1
	if cap(*buf) < want {
		*buf = make([]byte, max(want, firstRead))
	}
	b := (*buf)[:cap(*buf)]
	n := 0
	sniffed := false
	for {
		if n == len(b) {
			if int64(n) > limit {
				return nil, errTooLarge
			}
			nb := make([]byte, 2*len(b))
			copy(nb, b[:n])
			b = nb
			*buf = nb
		}
		end := len(b)
		if !sniffed {
			end = min(end, firstRead)
		}
		r, err := f.Read(b[n:end])
		n += r
		eof := err == io.EOF || (err == nil && r == 0)
		if err != nil && !eof {
			return nil, err
		}
		if !sniffed && (n >= binarySniff || eof) {
			if bytes.IndexByte(b[:min(n, binarySniff)], 0) >= 0 {
				return nil, errBinary
			}
			sniffed = true
		}
		if eof {
			break
		}
	}
	if int64(n) > limit {
		return nil, errTooLarge
	}
	return b[:n], nil
}
