package builtin

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/safetext"
	"github.com/clawde/clawd/internal/tools"
)

type listDir struct {
	env  *Env
	spec tools.Spec
}

// NewListDir returns the list_dir tool.
func NewListDir(env *Env) tools.Tool {
	return &listDir{env: env, spec: tools.Spec{
		Name:  "list_dir",
		Title: "List directory",
		Description: "List a directory of the workspace (default: the root). recursive descends up to max_depth levels " +
			"(default 3; direct children are depth 1). Dot entries are skipped unless include_hidden. Symlinks are " +
			"listed as kind \"symlink\" and never followed. Entries are sorted by path; paths are relative to the " +
			"workspace root. size_bytes is 0 for directories and symlinks. When the entry cap is hit, truncated is " +
			"true, the shallowest entries are kept and total still counts every matching entry.",
		Permission:   tools.PermRead,
		InputSchema:  compact(listDirInputSchema),
		OutputSchema: compact(listDirOutputSchema),
		PathArgs:     []string{"path"},
	}}
}

func (t *listDir) Spec() *tools.Spec { return &t.spec }

type listDirArgs struct {
	Path          *string `json:"path"`
	Recursive     bool    `json:"recursive"`
	IncludeHidden bool    `json:"include_hidden"`
	MaxDepth      *int64  `json:"max_depth"`
}

// ListEntry is one entry of list_dir's output.
type ListEntry struct {
	Name       string `json:"name"`
	Path       string `json:"path"`
	Kind       string `json:"kind"`
	SizeBytes  int64  `json:"size_bytes"`
	ModifiedAt string `json:"modified_at"`
}

// ListDirResult is list_dir's output object.
type ListDirResult struct {
	Entries []ListEntry `json:"entries"`
	// Total is the number of entries the listing matched (hidden filter and
	// max_depth applied), also past the entry cap; Truncated is then true and
	// Total > len(Entries).
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
}

const defaultMaxDepth = 3

// pendingDir is a directory found during the walk and still to be read.
type pendingDir struct {
	rel  string // root-relative slash path
	name string // its last component
	// parent is its parent directory's handle when the walk kept it open,
	// so the directory is opened by one name instead of by its whole path
	// from the root (which made listing a chain of n directories cost
	// n*n/2 lookups); nil: open rel from the workspace root.
	parent *keptDir
	depth  int         // depth of its entries relative to the listed path
	comps  int         // components of rel (its depth below the workspace root)
	info   fs.FileInfo // what Lstat said when it was found, to detect a swap
}

func (t *listDir) Call(ctx context.Context, raw jsontext.Value) (any, error) {
	var a listDirArgs
	if err := tools.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	p := ""
	if a.Path != nil {
		p = *a.Path
	}
	maxDepth := int64(defaultMaxDepth)
	if a.MaxDepth != nil {
		if *a.MaxDepth < 1 {
			return nil, &tools.ArgError{Msg: fmt.Sprintf(`"max_depth" must be at least 1 (direct children are depth 1), got %d`, *a.MaxDepth)}
		}
		maxDepth = *a.MaxDepth
	}
	if !a.Recursive {
		maxDepth = 1
	}
	ws := t.env.WS
	rel, err := ws.Rel(p)
	if err != nil {
		return nil, err
	}
	topRoot, err := sandbox.OpenDir(ws.Root, rel)
	if err != nil {
		return nil, listError(ws, p, rel, err)
	}
	top, err := topRoot.Open(".")
	if err == nil {
		var st fs.FileInfo
		if st, err = top.Stat(); err == nil && !st.IsDir() {
			err = syscall.ENOTDIR // reached only where O_DIRECTORY does not exist (Windows)
		}
		if err != nil {
			top.Close()
		}
	}
	if err != nil {
		topRoot.Close()
		return nil, listError(ws, p, rel, err)
	}
	limit := t.env.limits().MaxListEntries
	if limit <= 0 {
		limit = DefaultLimits().MaxListEntries
	}
	w := &dirWalk{ctx: ctx, ws: ws, hidden: a.IncludeHidden, maxDepth: int(min(maxDepth, 1<<20)), limit: limit,
		res: &ListDirResult{Entries: []ListEntry{}}}
	comps := 0
	if rel != "." {
		comps = strings.Count(rel, "/") + 1
	}
	if err := w.read(top, topRoot, pendingDir{rel: rel, depth: 1, comps: comps}); err != nil {
		w.drop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, listError(ws, p, rel, err)
	}
	if err := w.run(ctx); err != nil {
		return nil, err
	}
	slices.SortFunc(w.res.Entries, func(x, y ListEntry) int { return strings.Compare(x.Path, y.Path) })
	return w.res, nil
}

// openDir opens a directory through the workspace Root. O_DIRECTORY makes a
// named pipe (or anything else) fail at once instead of blocking the open.
func openDir(ws *sandbox.Workspace, rel string) (*os.File, error) {
	return ws.Root.OpenFile(rel, os.O_RDONLY|oDirectory, 0)
}

// keptDir is a directory handle the walk keeps open while some of its
// subdirectories are queued; refs counts them.
type keptDir struct {
	root *os.Root
	refs int
}

// maxKeptDirs bounds the handles a walk keeps open; past it, directories
// are opened by path from the workspace root (correct, only slower). The
// walk is depth-first, so it keeps one handle per level above the
// directory it reads, and nothing is entered below sandbox.MaxDepth: the
// bound is never reached. (A breadth-first walk kept one per directory of
// the level being read, which a wide tree made unbounded; capped at 64,
// every chain past the 64th cost n*n/2 lookups for its n levels.)
const maxKeptDirs = sandbox.MaxDepth + 1

func listError(ws *sandbox.Workspace, p, rel string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) {
		if st, e := ws.Root.Stat(rel); e == nil && !st.IsDir() {
			return tools.Errorf("%q is not a directory (it is %s); use read_file to read a file", p, fileutil.Kind(st.Mode()))
		}
	}
	return fileError(p, err)
}

// dirWalk lists depth-first, each directory opened by one name from its
// parent's handle, and keeps the entries a breadth-first listing would:
// all of depth 1, then depth 2, and so on, up to the entry cap (levels
// keeps the smallest by depth, then path). The walk goes on counting past
// the cap (so Total stays exact); the kept entries are the shallowest, so
// the top of a large tree is always complete.
type dirWalk struct {
	ctx      context.Context // nil: never cancelled
	ws       *sandbox.Workspace
	hidden   bool
	maxDepth int
	limit    int
	queue    []pendingDir // a stack: the last one is read next
	kept     int          // keptDir handles open
	levels   levelHeap    // the entries kept so far
	res      *ListDirResult
}

// levelEntry is what orders a kept entry (res.Entries[idx]) in a
// breadth-first listing: its depth, then its path compared name by name
// (key is the real path; the entry's may show U+FFFD for invalid bytes).
type levelEntry struct {
	depth int
	key   string
	idx   int
}

func compareLevel(a, b *levelEntry) int {
	if a.depth != b.depth {
		return cmp.Compare(a.depth, b.depth)
	}
	return compareNames(a.key, b.key)
}

// compareNames compares two paths with the same number of components
// name by name ("a/x" before "a-b/y", as "a" sorts before "a-b").
func compareNames(a, b string) int {
	for {
		ia, ib := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		if ia < 0 || ib < 0 {
			return strings.Compare(a, b)
		}
		if c := strings.Compare(a[:ia], b[:ib]); c != 0 {
			return c
		}
		a, b = a[ia+1:], b[ib+1:]
	}
}

// levelHeap is a max-heap of the entries kept: its root is the one to
// drop first when a smaller one comes.
type levelHeap []levelEntry

func (h levelHeap) Len() int           { return len(h) }
func (h levelHeap) Less(i, j int) bool { return compareLevel(&h[i], &h[j]) > 0 }
func (h levelHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *levelHeap) Push(x any)        { *h = append(*h, x.(levelEntry)) }
func (h *levelHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// keep offers one entry at depth, path p (real name) to the kept set:
// below the cap it is kept; at the cap it replaces the largest kept one if
// it is smaller.
func (w *dirWalk) keep(depth int, p, name string, info fs.FileInfo) {
	le := levelEntry{depth: depth, key: p, idx: len(w.res.Entries)}
	if le.idx < w.limit {
		w.res.Entries = append(w.res.Entries, entryOf(name, p, info))
		if w.levels = append(w.levels, le); len(w.levels) == w.limit {
			heap.Init(&w.levels) // a heap only once something may be dropped
		}
		return
	}
	if w.limit <= 0 || compareLevel(&le, &w.levels[0]) >= 0 {
		return
	}
	le.idx = w.levels[0].idx
	w.res.Entries[le.idx] = entryOf(name, p, info)
	w.levels[0] = le
	heap.Fix(&w.levels, 0)
}

// release drops a queued directory's reference on its parent's handle.
func (w *dirWalk) release(d pendingDir) {
	if d.parent == nil {
		return
	}
	if d.parent.refs--; d.parent.refs == 0 {
		d.parent.root.Close()
		w.kept--
	}
}

// drop releases every queued directory (the walk ends early).
func (w *dirWalk) drop() {
	for _, d := range w.queue {
		w.release(d)
	}
	w.queue = nil
}

// open opens a queued directory: by name from its parent's kept handle,
// else by path from the workspace root.
func (w *dirWalk) open(d pendingDir) (*os.Root, error) {
	if d.parent == nil {
		return sandbox.OpenDir(w.ws.Root, d.rel)
	}
	defer w.release(d)
	return sandbox.OpenDir(d.parent.root, d.name)
}

func (w *dirWalk) run(ctx context.Context) error {
	defer w.finish()
	for len(w.queue) > 0 {
		if err := ctx.Err(); err != nil {
			w.drop()
			return err
		}
		d := w.queue[len(w.queue)-1]
		w.queue = w.queue[:len(w.queue)-1]
		r, err := w.open(d)
		if err != nil {
			// Removed, replaced or unreadable since it was found: it is
			// simply not descended (an escape is refused by the Root and
			// lands here too; nothing outside is read).
			continue
		}
		f, err := r.Open(".")
		if err != nil {
			r.Close()
			continue
		}
		// Descend only into the directory that was listed: if the name now
		// leads somewhere else (swapped for a symlink to another directory
		// of the workspace, or replaced), skip it rather than follow.
		if st, err := f.Stat(); err != nil || !os.SameFile(st, d.info) {
			f.Close()
			r.Close()
			continue
		}
		_ = w.read(f, r, d) // a subdirectory that fails to read is skipped
	}
	return nil
}

// finish completes the result once the walk is over.
func (w *dirWalk) finish() {
	w.levels = nil
	w.res.Truncated = w.res.Total > len(w.res.Entries)
}

// read lists one open directory (and closes it). os.File.ReadDir on a file
// opened through a Root stats every entry with fstatat relative to this
// directory's descriptor, never by host path name, so a parent swapped for a
// symlink meanwhile cannot redirect the stat.
//
// r is the directory's handle: kept open for its queued subdirectories
// (up to maxKeptDirs handles in all), else closed.
func (w *dirWalk) read(f *os.File, r *os.Root, d pendingDir) error {
	ents, err := readDirCtx(w.ctx, f)
	f.Close()
	if err != nil && len(ents) == 0 {
		r.Close()
		return err
	}
	queued := len(w.queue)
	defer func() {
		n := len(w.queue) - queued
		if n == 0 || w.kept >= maxKeptDirs {
			r.Close()
			return
		}
		w.kept++
		k := &keptDir{root: r, refs: n}
		for i := queued; i < len(w.queue); i++ {
			w.queue[i].parent = k
		}
	}()
	// File.ReadDir returns directory order; sorted, the subdirectories are
	// pushed in name order and then reversed, so the stack reads the
	// smallest name next.
	slices.SortFunc(ents, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
	defer func() { slices.Reverse(w.queue[queued:]) }()
	for _, e := range ents {
		name := e.Name()
		if !w.hidden && strings.HasPrefix(name, ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // vanished between readdir and stat
		}
		p := name
		if d.rel != "." {
			p = d.rel + "/" + name
		}
		if len(p) > sandbox.MaxPathBytes {
			// No tool could take this path as an argument: not listed
			// (only a tree made deeper than PATH_MAX has such entries).
			continue
		}
		w.res.Total++
		w.keep(d.depth, p, name, info)
		// Below sandbox.MaxDepth nothing is entered, however large
		// max_depth: it bounds the walk of a hostile, arbitrarily deep tree
		// and the handles the walk keeps (one per level).
		if info.IsDir() && d.depth < w.maxDepth && d.comps+1 < sandbox.MaxDepth {
			w.queue = append(w.queue, pendingDir{rel: p, name: name, depth: d.depth + 1, comps: d.comps + 1, info: info})
		}
	}
	return nil
}

// readDirBatch is how many entries readDirCtx reads between checks of the
// context: a directory of a million entries takes about a second to list.
const readDirBatch = 1024

// readDirCtx is f.ReadDir(-1) that stops with ctx's error when ctx ends.
func readDirCtx(ctx context.Context, f *os.File) ([]fs.DirEntry, error) {
	var all []fs.DirEntry
	for {
		if ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ents, err := f.ReadDir(readDirBatch)
		all = append(all, ents...)
		if err == io.EOF {
			return all, nil
		}
		if err != nil || len(ents) == 0 {
			return all, err
		}
	}
}

// entryOf describes one entry. A name that is not valid UTF-8 (file
// systems take any bytes) has its invalid bytes shown as U+FFFD, as the
// answer is JSON; the walk itself goes on using the real name.
func entryOf(name, p string, info fs.FileInfo) ListEntry {
	e := ListEntry{Name: safetext.ValidUTF8(name), Path: safetext.ValidUTF8(p), ModifiedAt: info.ModTime().UTC().Format(time.RFC3339)}
	m := info.Mode()
	switch {
	case m&fs.ModeSymlink != 0:
		e.Kind = "symlink"
	case m.IsDir():
		e.Kind = "dir"
	default:
		// The spec's kinds are file, dir and symlink; sockets, pipes and
		// devices are non-directories a model may still want to see, so
		// they are listed as "file" with size 0 (read_file refuses them
		// with a message naming what they are).
		e.Kind = "file"
		if m.IsRegular() {
			e.SizeBytes = info.Size()
		}
	}
	return e
}
