package builtin

import (
	"path/filepath"
	"strings"
	"testing"
)

// escapeFixture is a workspace with every kind of way out prepared next to
// it: an outside directory with secrets, a sibling whose name shares the
// workspace's prefix (/x/ws_evil for /x/ws), and symlinks that lead out as
// the final or an intermediate component, dangling, chained, or by "..".
type escapeFixture struct {
	base, ws, outside, evil string
	env                     *Env
}

const outsideSecret = "OUTSIDE-SECRET"

func newEscapeFixture(t testing.TB) *escapeFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &escapeFixture{
		base:    base,
		ws:      filepath.Join(base, "ws"),
		outside: filepath.Join(base, "outside"),
		evil:    filepath.Join(base, "ws_evil"),
	}
	writeFileT(t, filepath.Join(f.outside, "secret.txt"), outsideSecret, 0o644)
	writeFileT(t, filepath.Join(f.outside, "sub", "deep.txt"), outsideSecret+"-DEEP", 0o644)
	writeFileT(t, filepath.Join(f.evil, "secret.txt"), "EVIL-SECRET", 0o644)
	writeFileT(t, filepath.Join(f.ws, "in.txt"), "inside", 0o644)
	writeFileT(t, filepath.Join(f.ws, "sub", "a.txt"), "inside-a", 0o644)
	for link, target := range map[string]string{
		"file_out":         filepath.Join(f.outside, "secret.txt"),
		"file_out_rel":     "../outside/secret.txt",
		"dir_out":          "../outside",
		"dir_out_abs":      f.outside,
		"dangling_out":     filepath.Join(f.outside, "nothere.txt"),
		"dangling_dir_out": "../outside/newdir",
		"chain1":           "chain2",
		"chain2":           "sub/../../outside",
		"sub/up":           "../..",
		"evil_link":        "../ws_evil",
		"in_link":          "sub",
	} {
		symlinkT(t, target, filepath.Join(f.ws, link))
	}
	f.env = testEnv(t, f.ws, nil)
	return f
}

// snapshots returns the state of everything the tools must not touch: the
// outside directory, the prefix sibling, and the workspace itself (a refused
// call must not leave a temp file or a created directory behind either).
func (f *escapeFixture) snapshots(t testing.TB) [3]string {
	return [3]string{snapshot(t, f.outside), snapshot(t, f.evil), snapshot(t, f.ws)}
}

func (f *escapeFixture) checkUnchanged(t testing.TB, before [3]string, what string) {
	t.Helper()
	after := f.snapshots(t)
	for i, name := range []string{"outside dir", "ws_evil sibling", "workspace"} {
		if before[i] != after[i] {
			t.Errorf("%s: %s changed:\nbefore:\n%s\nafter:\n%s", what, name, before[i], after[i])
		}
	}
}

// fileEscapes are path arguments naming a file outside the workspace.
func (f *escapeFixture) fileEscapes() []string {
	return []string{
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		f.outside + "/secret.txt",          // absolute path elsewhere
		f.evil + "/secret.txt",             // sibling sharing the root's prefix
		"../ws_evil/secret.txt",            // the same, relative
		"file_out",                         // final component: symlink, absolute target
		"file_out_rel",                     // final component: symlink, relative target
		"dir_out/secret.txt",               // intermediate component
		"dir_out_abs/secret.txt",           // intermediate, absolute target
		"dir_out/sub/deep.txt",             // intermediate, deeper
		"dangling_out",                     // dangling symlink leading outside
		"dangling_dir_out/x.txt",           // dangling intermediate
		"chain1/secret.txt",                // in-root link to a link that leaves
		"sub/up/outside/secret.txt",        // in-root link whose target climbs out
		"evil_link/secret.txt",             // link to the prefix sibling
		"sub/up/ws_evil/secret.txt",        // ... reached by climbing
		"in_link/../../outside/secret.txt", // lexical ".." after an in-root link
	}
}

// dirEscapes are path arguments naming a directory outside the workspace.
func (f *escapeFixture) dirEscapes() []string {
	return []string{
		"..",
		"../outside",
		"sub/../..",
		f.outside,
		f.evil,
		f.base,
		"/",
		"../ws_evil",
		"dir_out",
		"dir_out_abs",
		"dir_out/sub",
		"dangling_dir_out",
		"chain1",
		"sub/up",
		"sub/up/outside",
		"evil_link",
	}
}

func TestReadFileEscapes(t *testing.T) {
	f := newEscapeFixture(t)
	tool := NewReadFile(f.env)
	for _, p := range f.fileEscapes() {
		for _, enc := range []string{"utf8", "base64"} {
			before := f.snapshots(t)
			res, err := callTool(t, tool, map[string]any{"path": p, "encoding": enc})
			if !isViolation(err) {
				t.Errorf("read_file %q (%s): got %#v, %v; want a sandbox violation", p, enc, res, err)
			}
			if res != nil {
				t.Errorf("read_file %q returned content %+v", p, res)
			}
			f.checkUnchanged(t, before, "read_file "+p)
		}
	}
}

func TestWriteFileEscapes(t *testing.T) {
	f := newEscapeFixture(t)
	tool := NewWriteFile(f.env)
	paths := append(f.fileEscapes(),
		"dir_out/newfile.txt",      // new file through an intermediate link
		"dir_out/newdir/new.txt",   // ... with a missing directory below it
		"dangling_dir_out/a/b.txt", // parents to create through a dangling link
		"sub/up/outside/n/x.txt",   // parents to create after climbing out
	)
	for _, p := range paths {
		for _, parents := range []bool{false, true} {
			before := f.snapshots(t)
			res, err := callTool(t, tool, map[string]any{"path": p, "content": "PWNED", "create_parents": parents})
			if !isViolation(err) {
				t.Errorf("write_file %q (create_parents=%v): got %#v, %v; want a sandbox violation", p, parents, res, err)
			}
			f.checkUnchanged(t, before, "write_file "+p)
		}
	}
}

func TestListDirEscapes(t *testing.T) {
	f := newEscapeFixture(t)
	tool := NewListDir(f.env)
	for _, p := range f.dirEscapes() {
		for _, rec := range []bool{false, true} {
			before := f.snapshots(t)
			res, err := callTool(t, tool, map[string]any{"path": p, "recursive": rec, "include_hidden": true})
			if !isViolation(err) {
				t.Errorf("list_dir %q (recursive=%v): got %+v, %v; want a sandbox violation", p, rec, res, err)
			}
			f.checkUnchanged(t, before, "list_dir "+p)
		}
	}
	// Listing the workspace itself shows the links as links and never
	// anything of what they point to.
	res, err := callTool(t, tool, map[string]any{"recursive": true, "max_depth": 10, "include_hidden": true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.(*ListDirResult).Entries {
		if strings.Contains(e.Path, "secret") || strings.Contains(e.Path, "deep") {
			t.Errorf("list_dir of the root shows outside entry %q", e.Path)
		}
	}
}

func TestBashWorkingDirEscapes(t *testing.T) {
	f := newEscapeFixture(t)
	tool := NewBash(f.env)
	for _, p := range f.dirEscapes() {
		before := f.snapshots(t)
		// If the command ran at all, it would leave a file in its cwd.
		res, err := callTool(t, tool, map[string]any{"command": "echo ran > ran.txt; cat secret.txt", "working_dir": p})
		if !isViolation(err) {
			t.Errorf("bash working_dir %q: got %+v, %v; want a sandbox violation", p, res, err)
		}
		f.checkUnchanged(t, before, "bash working_dir "+p)
	}
}
