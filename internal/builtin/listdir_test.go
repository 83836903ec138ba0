//go:build unix

package builtin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// newListWS builds:
//
//	a-b  a.c  a.txt(5 bytes)  b/  b/c.txt  b/d/  b/d/e.txt  b/d/f/  b/d/f/g.txt
//	.hidden  .hdir/  .hdir/x  link -> a.txt  linkdir -> b  dangling -> nowhere
func newListWS(t *testing.T, lim *Limits) (string, tools.Tool) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a-b", "a.c", "b/c.txt", "b/d/e.txt", "b/d/f/g.txt", ".hidden", ".hdir/x", "b/.inner"} {
		writeFileT(t, filepath.Join(dir, f), "x", 0o644)
	}
	writeFileT(t, filepath.Join(dir, "a.txt"), "hello", 0o644)
	symlinkT(t, "a.txt", filepath.Join(dir, "link"))
	symlinkT(t, "b", filepath.Join(dir, "linkdir"))
	symlinkT(t, "nowhere", filepath.Join(dir, "dangling"))
	return dir, NewListDir(testEnv(t, dir, lim))
}

func paths(r *ListDirResult) []string {
	var out []string
	for _, e := range r.Entries {
		out = append(out, e.Path)
	}
	return out
}

func TestListDir(t *testing.T) {
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{name: "root, flat", args: nil,
			want: []string{"a-b", "a.c", "a.txt", "b", "dangling", "link", "linkdir"}},
		{name: "recursive, default depth 3", args: map[string]any{"recursive": true},
			want: []string{"a-b", "a.c", "a.txt", "b", "b/c.txt", "b/d", "b/d/e.txt", "b/d/f", "dangling", "link", "linkdir"}},
		{name: "max_depth 1 is flat", args: map[string]any{"recursive": true, "max_depth": 1},
			want: []string{"a-b", "a.c", "a.txt", "b", "dangling", "link", "linkdir"}},
		{name: "max_depth 2", args: map[string]any{"recursive": true, "max_depth": 2},
			want: []string{"a-b", "a.c", "a.txt", "b", "b/c.txt", "b/d", "dangling", "link", "linkdir"}},
		{name: "max_depth ignored when not recursive", args: map[string]any{"max_depth": 9},
			want: []string{"a-b", "a.c", "a.txt", "b", "dangling", "link", "linkdir"}},
		{name: "deep", args: map[string]any{"recursive": true, "max_depth": 10},
			want: []string{"a-b", "a.c", "a.txt", "b", "b/c.txt", "b/d", "b/d/e.txt", "b/d/f", "b/d/f/g.txt", "dangling", "link", "linkdir"}},
		{name: "include_hidden lists and descends dot entries", args: map[string]any{"recursive": true, "include_hidden": true, "max_depth": 2},
			want: []string{".hdir", ".hdir/x", ".hidden", "a-b", "a.c", "a.txt", "b", "b/.inner", "b/c.txt", "b/d", "dangling", "link", "linkdir"}},
		{name: "subdirectory", args: map[string]any{"path": "b", "recursive": true, "max_depth": 1},
			want: []string{"b/c.txt", "b/d"}},
		{name: "subdirectory with dot segments and slash", args: map[string]any{"path": "./b/d/"},
			want: []string{"b/d/e.txt", "b/d/f"}},
		{name: "through an in-root link keeps the given path", args: map[string]any{"path": "linkdir"},
			want: []string{"linkdir/c.txt", "linkdir/d"}},
		{name: "explicit hidden directory", args: map[string]any{"path": ".hdir"},
			want: []string{".hdir/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, tool := newListWS(t, nil)
			res, err := callTool(t, tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			r := res.(*ListDirResult)
			if got := paths(r); !slices.Equal(got, tt.want) {
				t.Errorf("paths = %q\nwant    %q", got, tt.want)
			}
			if r.Total != len(tt.want) || r.Truncated {
				t.Errorf("total = %d truncated = %v, want %d false", r.Total, r.Truncated, len(tt.want))
			}
		})
	}
}

func TestListDirEntryFields(t *testing.T) {
	dir, tool := newListWS(t, nil)
	mtime := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "a.txt"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	res, err := callTool(t, tool, nil)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]ListEntry{}
	for _, e := range res.(*ListDirResult).Entries {
		byPath[e.Path] = e
		ts, err := time.Parse(time.RFC3339, e.ModifiedAt)
		if err != nil || !strings.HasSuffix(e.ModifiedAt, "Z") || ts.IsZero() {
			t.Errorf("%s: modified_at %q is not RFC 3339 UTC", e.Path, e.ModifiedAt)
		}
	}
	want := map[string]ListEntry{
		"a.txt":    {Name: "a.txt", Path: "a.txt", Kind: "file", SizeBytes: 5, ModifiedAt: "2026-06-01T10:00:00Z"},
		"b":        {Name: "b", Path: "b", Kind: "dir"},
		"link":     {Name: "link", Path: "link", Kind: "symlink"},
		"linkdir":  {Name: "linkdir", Path: "linkdir", Kind: "symlink"},
		"dangling": {Name: "dangling", Path: "dangling", Kind: "symlink"},
	}
	for p, w := range want {
		g := byPath[p]
		if w.ModifiedAt == "" {
			g.ModifiedAt = ""
		}
		if g != w {
			t.Errorf("entry %s = %+v, want %+v", p, g, w)
		}
	}
}

// The entry cap keeps the shallowest entries and total counts them all.
func TestListDirTruncated(t *testing.T) {
	_, tool := newListWS(t, &Limits{MaxListEntries: 8})
	res, err := callTool(t, tool, map[string]any{"recursive": true, "max_depth": 10})
	if err != nil {
		t.Fatal(err)
	}
	r := res.(*ListDirResult)
	want := []string{"a-b", "a.c", "a.txt", "b", "b/c.txt", "dangling", "link", "linkdir"}
	if got := paths(r); !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
	if !r.Truncated || r.Total != 12 {
		t.Errorf("truncated = %v total = %d, want true 12", r.Truncated, r.Total)
	}
}

func TestListDirEmptyIsArray(t *testing.T) {
	dir, tool := newListWS(t, nil)
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := callTool(t, tool, map[string]any{"path": "empty"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if string(b) != `{"entries":[],"total":0,"truncated":false}` {
		t.Errorf("empty listing = %s", b)
	}
}

func TestListDirErrors(t *testing.T) {
	dir, tool := newListWS(t, nil)
	if err := unix.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    any
		argErr  bool
		msgPart string
	}{
		{name: "file", args: map[string]any{"path": "a.txt"}, msgPart: "not a directory (it is a regular file); use read_file"},
		{name: "symlink to file", args: map[string]any{"path": "link"}, msgPart: "not a directory"},
		{name: "fifo", args: map[string]any{"path": "pipe"}, msgPart: "not a directory (it is a named pipe)"},
		{name: "missing", args: map[string]any{"path": "nope"}, msgPart: "no such file or directory"},
		{name: "dangling", args: map[string]any{"path": "dangling"}, msgPart: "no such file or directory"},
		{name: "below a file", args: map[string]any{"path": "a.txt/x"}, msgPart: "not a directory"},
		{name: "max_depth 0", args: map[string]any{"recursive": true, "max_depth": 0}, argErr: true, msgPart: `"max_depth" must be at least 1`},
		{name: "max_depth negative", args: map[string]any{"max_depth": -2}, argErr: true, msgPart: `"max_depth"`},
		{name: "max_depth float", args: `{"max_depth":1.5}`, argErr: true, msgPart: `"max_depth"`},
		{name: "recursive string", args: `{"recursive":"yes"}`, argErr: true, msgPart: `"recursive"`},
		{name: "unknown", args: `{"path":".","depth":2}`, argErr: true, msgPart: `unknown argument "depth"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			var err error
			go func() {
				defer close(done)
				_, err = callTool(t, tool, tt.args)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("list_dir blocked")
			}
			if tt.argErr && !isArgError(err) || !tt.argErr && !isToolError(err) {
				t.Fatalf("error %T %v; want argErr=%v", err, err, tt.argErr)
			}
			if !strings.Contains(err.Error(), tt.msgPart) {
				t.Errorf("error %q does not mention %q", err, tt.msgPart)
			}
		})
	}
}

// A directory replaced by a symlink (to another directory of the workspace)
// between being listed and being descended is not followed.
func TestListDirDoesNotDescendSwappedDir(t *testing.T) {
	dir, tool := newListWS(t, nil)
	w := &dirWalk{ws: tool.(*listDir).env.WS, maxDepth: 5, limit: 100, res: &ListDirResult{}}
	r, err := sandbox.OpenDir(w.ws.Root, ".")
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.read(f, r, pendingDir{rel: ".", depth: 1}); err != nil {
		t.Fatal(err)
	}
	// Now swap b for a link to b/d: descending "b" must not list d's files.
	if err := os.Rename(filepath.Join(dir, "b"), filepath.Join(dir, "b.real")); err != nil {
		t.Fatal(err)
	}
	symlinkT(t, "b.real/d", filepath.Join(dir, "b"))
	if err := w.run(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, e := range w.res.Entries {
		if strings.HasPrefix(e.Path, "b/") {
			t.Errorf("descended into swapped b: %s", e.Path)
		}
	}
}
