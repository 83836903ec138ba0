package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/sandbox"
)

type listDir struct {
	env  *Env
	spec Spec
}

// NewListDir returns the list_dir tool.
func NewListDir(env *Env) Tool {
	return &listDir{env: env, spec: Spec{
		Name:  "list_dir",
		Title: "List directory",
		Description: "List a directory of the workspace (default: the root). recursive descends up to max_depth levels " +
			"(default 3; direct children are depth 1). Dot entries are skipped unless include_hidden. Symlinks are " +
			"listed as kind \"symlink\" and never followed. Entries are sorted by path; paths are relative to the " +
			"workspace root. size_bytes is 0 for directories and symlinks. When the entry cap is hit, truncated is " +
			"true, the shallowest entries are kept and total still counts every matching entry.",
		Permission:   PermRead,
		InputSchema:  compact(listDirInputSchema),
		OutputSchema: compact(listDirOutputSchema),
		PathArgs:     []string{"path"},
	}}
}

func (t *listDir) Spec() *Spec { return &t.spec }

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
	rel   string      // root-relative slash path
	depth int         // depth of its entries relative to the listed path
	info  fs.FileInfo // what Lstat said when it was found, to detect a swap
}

func (t *listDir) Call(ctx context.Context, raw jsontext.Value) (any, error) {
	var a listDirArgs
	if err := DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	p := ""
	if a.Path != nil {
		p = *a.Path
	}
	maxDepth := int64(defaultMaxDepth)
	if a.MaxDepth != nil {
		if *a.MaxDepth < 1 {
			return nil, &ArgError{Msg: fmt.Sprintf(`"max_depth" must be at least 1 (direct children are depth 1), got %d`, *a.MaxDepth)}
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
	top, err := openDir(ws, rel)
	if err != nil {
		return nil, listError(ws, p, rel, err)
	}
	if st, err := top.Stat(); err != nil || !st.IsDir() {
		// Reached only where O_DIRECTORY does not exist (Windows).
		top.Close()
		if err == nil {
			return nil, Errorf("%q is not a directory (it is %s); use read_file to read a file", p, describeKind(st.Mode()))
		}
		return nil, fileError(p, err)
	}
	limit := t.env.limits().MaxListEntries
	if limit <= 0 {
		limit = DefaultLimits().MaxListEntries
	}
	w := &dirWalk{ws: ws, hidden: a.IncludeHidden, maxDepth: int(min(maxDepth, 1<<20)), limit: limit,
		res: &ListDirResult{Entries: []ListEntry{}}}
	if err := w.read(top, pendingDir{rel: rel, depth: 1}); err != nil {
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

func listError(ws *sandbox.Workspace, p, rel string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) {
		if st, e := ws.Root.Stat(rel); e == nil && !st.IsDir() {
			return Errorf("%q is not a directory (it is %s); use read_file to read a file", p, describeKind(st.Mode()))
		}
	}
	return fileError(p, err)
}

func describeKind(m fs.FileMode) string {
	if m.IsRegular() {
		return "a regular file"
	}
	return fileKind(m)
}

// dirWalk lists breadth-first: all of depth 1, then depth 2, and so on. When
// the entry cap is reached the walk goes on counting (so Total stays exact)
// but keeps no more entries; the kept ones are thus the shallowest, so the
// top of a large tree is always complete.
type dirWalk struct {
	ws       *sandbox.Workspace
	hidden   bool
	maxDepth int
	limit    int
	queue    []pendingDir
	res      *ListDirResult
}

func (w *dirWalk) run(ctx context.Context) error {
	for len(w.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := w.queue[0]
		w.queue = w.queue[1:]
		f, err := openDir(w.ws, d.rel)
		if err != nil {
			// Removed, replaced or unreadable since it was found: it is
			// simply not descended (an escape is refused by the Root and
			// lands here too; nothing outside is read).
			continue
		}
		// Descend only into the directory that was listed: if the name now
		// leads somewhere else (swapped for a symlink to another directory
		// of the workspace, or replaced), skip it rather than follow.
		if st, err := f.Stat(); err != nil || !os.SameFile(st, d.info) {
			f.Close()
			continue
		}
		_ = w.read(f, d) // a subdirectory that fails to read is skipped
	}
	return nil
}

// read lists one open directory (and closes it). os.File.ReadDir on a file
// opened through a Root stats every entry with fstatat relative to this
// directory's descriptor, never by host path name, so a parent swapped for a
// symlink meanwhile cannot redirect the stat.
func (w *dirWalk) read(f *os.File, d pendingDir) error {
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(ents) == 0 {
		return err
	}
	// File.ReadDir returns directory order; sort so that a truncated level
	// keeps a deterministic set.
	slices.SortFunc(ents, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
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
		w.res.Total++
		if len(w.res.Entries) < w.limit {
			w.res.Entries = append(w.res.Entries, entryOf(name, p, info))
		} else {
			w.res.Truncated = true
		}
		if info.IsDir() && d.depth < w.maxDepth {
			w.queue = append(w.queue, pendingDir{rel: p, depth: d.depth + 1, info: info})
		}
	}
	return nil
}

func entryOf(name, p string, info fs.FileInfo) ListEntry {
	e := ListEntry{Name: name, Path: p, ModifiedAt: info.ModTime().UTC().Format(time.RFC3339)}
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
