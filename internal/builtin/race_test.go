//go:build linux

package builtin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/tools"
)

// TestSymlinkSwapRace drives read_file, write_file, list_dir and bash while
// two goroutines keep swapping, as fast as the kernel allows,
//
//   - the directory d with a symlink to the outside directory
//     (renameat2 RENAME_EXCHANGE: the name d is always one or the other), and
//   - the file file.txt with a symlink to an outside file.
//
// Whatever the interleaving, no call may return outside content or names,
// and nothing outside may be created or changed (contents and mtimes of the
// outside directory are compared afterwards). Both outcomes must occur
// (reads inside succeed, reads through the link are refused), which shows
// the swap really raced the calls.
func TestSymlinkSwapRace(t *testing.T) {
	f := newEscapeFixture(t)
	writeFileT(t, filepath.Join(f.outside, "f.txt"), outsideSecret, 0o644)
	writeFileT(t, filepath.Join(f.outside, "s", "f.txt"), outsideSecret, 0o644)
	writeFileT(t, filepath.Join(f.outside, "SECRET_NAME.txt"), outsideSecret, 0o644)
	writeFileT(t, filepath.Join(f.ws, "d", "f.txt"), "inside-d", 0o644)
	writeFileT(t, filepath.Join(f.ws, "d", "s", "f.txt"), "inside-s", 0o644)
	writeFileT(t, filepath.Join(f.ws, "file.txt"), "inside-file", 0o644)
	symlinkT(t, "../outside", filepath.Join(f.ws, "x"))
	before := [2]string{snapshot(t, f.outside), snapshot(t, f.evil)}

	d, x := filepath.Join(f.ws, "d"), filepath.Join(f.ws, "x")
	if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, x, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE unsupported here: %v", err)
	}

	var stop atomic.Bool
	var swappers sync.WaitGroup
	var dirSwaps, fileSwaps atomic.Int64
	swappers.Add(2)
	go func() {
		defer swappers.Done()
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, x, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
			dirSwaps.Add(1)
			runtime.Gosched() // let the file swapper and the callers run too
		}
	}()
	go func() {
		defer swappers.Done()
		file := filepath.Join(f.ws, "file.txt")
		lnk, reg := filepath.Join(f.ws, ".swap-link"), filepath.Join(f.ws, ".swap-file")
		for !stop.Load() {
			// rename over the name: file.txt is always a regular file or a
			// symlink to the outside secret, never missing.
			os.Remove(lnk)
			if err := os.Symlink(filepath.Join(f.outside, "secret.txt"), lnk); err != nil {
				t.Errorf("symlink: %v", err)
				return
			}
			if err := os.Rename(lnk, file); err != nil {
				t.Errorf("rename: %v", err)
				return
			}
			if err := os.WriteFile(reg, []byte("inside-file"), 0o644); err != nil {
				t.Errorf("write: %v", err)
				return
			}
			if err := os.Rename(reg, file); err != nil {
				t.Errorf("rename: %v", err)
				return
			}
			fileSwaps.Add(1)
		}
	}()

	read, write, list, search := NewReadFile(f.env), NewWriteFile(f.env), NewListDir(f.env), NewSearch(f.env)
	type op struct {
		tool tools.Tool
		args map[string]any
		want string // the only content a successful read may return
	}
	ops := []op{
		{read, map[string]any{"path": "d/f.txt"}, "inside-d"},
		{read, map[string]any{"path": "d/s/f.txt"}, "inside-s"},
		{read, map[string]any{"path": "file.txt"}, "inside-file"},
		{write, map[string]any{"path": "d/w.txt", "content": "w"}, ""},
		{write, map[string]any{"path": "d/s/new/n.txt", "content": "n", "create_parents": true}, ""},
		{write, map[string]any{"path": "file.txt", "content": "inside-file"}, ""},
		{list, map[string]any{"path": "d", "recursive": true, "include_hidden": true}, ""},
		{list, map[string]any{"recursive": true, "include_hidden": true, "max_depth": 5}, ""},
		{search, map[string]any{"query": "SECRET|inside", "is_regex": true}, ""},
		{search, map[string]any{"query": "SECRET|inside", "is_regex": true, "path": "d"}, ""},
	}
	const workers, perWorker = 4, 1500
	var writes, lists, searches atomic.Int64
	okReads := make([]atomic.Int64, len(ops))
	refusedReads := make([]atomic.Int64, len(ops))
	var workersWG sync.WaitGroup
	for w := range workers {
		workersWG.Add(1)
		go func() {
			defer workersWG.Done()
			for i := range perWorker {
				k := (w + i) % len(ops)
				o := ops[k]
				res, err := o.tool.Call(t.Context(), mustJSON(t, o.args))
				switch r := res.(type) {
				case *ReadFileResult:
					okReads[k].Add(1)
					if r.Content != o.want {
						t.Errorf("read %v returned %q", o.args["path"], r.Content)
					}
				case *WriteFileResult:
					writes.Add(1)
					if !strings.HasPrefix(r.Path, f.ws+"/") {
						t.Errorf("write reported path %q outside the workspace", r.Path)
					}
				case *ListDirResult:
					lists.Add(1)
					for _, e := range r.Entries {
						if strings.Contains(e.Name, "SECRET") || strings.Contains(e.Path, "outside") {
							t.Errorf("list_dir returned outside entry %q", e.Path)
						}
					}
				case *SearchResult:
					searches.Add(1)
					for _, m := range r.Matches {
						if strings.Contains(m.Text, "SECRET") || strings.Contains(m.File, "outside") {
							t.Errorf("search returned outside content %q in %q", m.Text, m.File)
						}
					}
				case nil:
					if o.tool == read && isViolation(err) {
						refusedReads[k].Add(1)
					}
					if !isViolation(err) && !isToolError(err) {
						t.Errorf("%s %v: unexpected error %T %v", o.tool.Spec().Name, o.args, err, err)
					}
				}
			}
		}()
	}

	// bash with working_dir d: the command must run inside or not at all.
	// The kernel's view of the cwd (/proc/PID/cwd) is checked, not `pwd`:
	// bash's pwd prints a name ($PWD) that the swapper may have turned into
	// a link to outside after bash started, while the cwd itself, the
	// directory the files are read from, is still the inside one.
	workersWG.Add(1)
	var bashRuns, bashInside atomic.Int64
	go func() {
		defer workersWG.Done()
		bash := NewBash(f.env)
		for range 100 {
			res, err := bash.Call(t.Context(), mustJSON(t, map[string]any{"command": "readlink /proc/$$/cwd; cat f.txt; ls; touch ran.txt", "working_dir": "d"}))
			if err != nil {
				if !isViolation(err) && !isToolError(err) {
					t.Errorf("bash: %v", err)
				}
				continue
			}
			bashRuns.Add(1)
			out := res.(*BashResult).Stdout
			if strings.Contains(out, "OUTSIDE") || strings.Contains(out, "SECRET") || !strings.HasPrefix(out, f.ws+"/") {
				t.Errorf("bash ran outside: %q", out)
			}
			if strings.Contains(out, "inside-d") {
				bashInside.Add(1)
			}
		}
	}()

	workersWG.Wait()
	stop.Store(true)
	swappers.Wait()

	after := [2]string{snapshot(t, f.outside), snapshot(t, f.evil)}
	if after != before {
		t.Errorf("outside changed during the race:\nbefore:\n%s\n%s\nafter:\n%s\n%s", before[0], before[1], after[0], after[1])
	}
	if left := tempFilesIn(t, f.ws); len(left) > 0 {
		t.Errorf("temp files left in the workspace: %v", left)
	}
	t.Logf("swaps: dir %d, file %d; writes %d; lists %d; searches %d; bash ran %d (saw inside %d)",
		dirSwaps.Load(), fileSwaps.Load(), writes.Load(), lists.Load(), searches.Load(), bashRuns.Load(), bashInside.Load())
	for k, o := range ops {
		if o.tool != read {
			continue
		}
		ok, refused := okReads[k].Load(), refusedReads[k].Load()
		t.Logf("read %v: ok %d, refused %d", o.args["path"], ok, refused)
		if ok == 0 || refused == 0 {
			t.Errorf("reads of %v never hit both states (ok %d, refused %d); the race proves nothing", o.args["path"], ok, refused)
		}
	}
}

// mustJSON encodes tool arguments (safe to call from any goroutine).
func mustJSON(t testing.TB, v map[string]any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Error(err)
	}
	return b
}

// The working directory is fixed when it is opened: swapping its name for a
// link to outside between that open and the child's chdir (the window the
// /proc/self/fd/N chdir closes) changes nothing.
func TestBashWorkingDirSwappedBeforeChdir(t *testing.T) {
	f := newEscapeFixture(t)
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	writeFileT(t, filepath.Join(f.ws, "d", "f.txt"), "inside-d", 0o644)
	writeFileT(t, filepath.Join(f.outside, "f.txt"), outsideSecret, 0o644)
	symlinkT(t, "../outside", filepath.Join(f.ws, "x"))
	before := snapshot(t, f.outside)

	dir, err := openWorkDir(context.Background(), f.env.WS, "d")
	if err != nil {
		t.Fatal(err)
	}
	defer dir.f.Close()
	// Now "d" is the link to outside and the real directory is "x".
	if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(f.ws, "d"), unix.AT_FDCWD, filepath.Join(f.ws, "x"), unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2: %v", err)
	}
	r, err := runIn(t.Context(), bashPath, "readlink /proc/$$/cwd; cat f.txt; touch ran.txt", dir, 5*time.Second, 8<<10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := f.ws + "/x\ninside-d"; r.Stdout != want {
		t.Errorf("stdout = %q, want %q (the directory opened, wherever its name went)", r.Stdout, want)
	}
	if after := snapshot(t, f.outside); after != before {
		t.Errorf("outside changed:\n%s\n---\n%s", before, after)
	}
}
