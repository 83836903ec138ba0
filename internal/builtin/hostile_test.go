//go:build unix

package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"

	"github.com/clawde/clawd/internal/support/cputime"
	"github.com/clawde/clawd/internal/support/race"
)

// The hostile-input table: for every tool, inputs meant to make a call slow
// or hang (deep paths, long components, FIFOs, sparse and single-line huge
// files, deep trees, pathological patterns), each with the bound it must
// meet and what it must answer. The code these tests were written against
// took from several seconds to minutes of CPU on the slow ones, or blocked
// forever.
//
// The bound holds the CPU time the process spends in the call, not its wall
// time: on a loaded machine (or under the race detector) a call that stops
// at its time limit still takes longer by the wall clock, since each piece
// of work between two checks of the limit waits for a core, but it does no
// more work. Work that runs past the limit (a regexp left running over the
// whole line) shows as CPU time over the bound wherever it runs. The wall
// time is held only to hostileHang times the bound, which catches a call
// that blocks (a FIFO opened for reading, a walk that never ends) without
// failing on a loaded machine.

const hostileTimeout = 500 * time.Millisecond // tool_timeout_ms for these tests

// hostileHang is how many times its bound a call may take by the wall clock:
// a guard against a call that blocks, wide enough for a loaded 2-core
// machine (2.7 s for a 1.5 s bound was seen at load 17).
const hostileHang = 10

// hostileLineMB is the size of the single-line files: large enough that a
// whole-line regexp run takes seconds, small enough to write quickly.
const hostileLineMB = 16

// mkChain creates depth nested directories name below dir, one mkdirat at
// a time (the whole path may exceed PATH_MAX), and a file f.txt in the
// deepest and in the tenth.
func mkChain(t *testing.T, dir, name string, depth int) {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range depth {
		if err := r.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := r.OpenRoot(name)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		r = next
		if i == 9 || i == depth-1 {
			if err := r.WriteFile("f.txt", []byte("needle\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Close()
}

// hostileWS builds the workspace every case runs in.
func hostileWS(t *testing.T) *Env {
	t.Helper()
	dir := t.TempDir()
	mkChain(t, dir, "d", sandbox.MaxDepth+300)
	mkChain(t, filepath.Join(dir), "e", 40)
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "tree", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "tree", "sub", "fifo.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(dir, "tree", "a.txt"), "a needle here\n", 0o644)
	// A name that makes an exponential brace glob try all its combinations.
	writeFileT(t, filepath.Join(dir, "tree", strings.Repeat("a", 48)), "x\n", 0o644)
	// Sparse: 4 GiB of nothing (no blocks used) and 60 MiB, under the
	// search size limit.
	for name, size := range map[string]int64{"sparse.bin": 4 << 30, "sparse60.txt": 60 << 20} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	// One line of hostileLineMB MiB: x's, a 'y' at the end (the prefilter
	// literal of (x+x+)+y is then present), no newline.
	line := make([]byte, hostileLineMB<<20)
	for i := range line {
		line[i] = 'x'
	}
	line[len(line)-1] = 'y'
	if err := os.MkdirAll(filepath.Join(dir, "long"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "long", "one.txt"), line, 0o644); err != nil {
		t.Fatal(err)
	}
	// Paths of ~4 KiB made of 250-byte names, and 32 files at the bottom:
	// a glob's cost per entry grows with the path it is matched against.
	g := filepath.Join(dir, "g", deepName(strings.Repeat("a", 250), 15))
	if err := os.MkdirAll(g, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 32 {
		writeFileT(t, filepath.Join(g, fmt.Sprintf("%s%02d", strings.Repeat("a", 200), i)), "x\n", 0o644)
	}
	lim := DefaultLimits()
	lim.DefaultTimeout = hostileTimeout
	return testEnv(t, dir, &lim)
}

// expectation helpers for the table.
type outcome func(res any, err error) error

func wantOK(res any, err error) error { return err }

// wantOKUnlessRace is for work done well within the time limit (a tenth
// of it on an idle 2-core machine) that the race detector, which slows
// Go's byte loops about tenfold, may take past it.
func wantOKUnlessRace(res any, err error) error {
	if race.Enabled {
		return wantOKOrTimeLimit(res, err)
	}
	return err
}

// wantOKOrTimeLimit is for work that is legitimate but large: done within
// the time limit on an idle machine, stopped at it on a loaded one.
func wantOKOrTimeLimit(res any, err error) error {
	if err != nil && !strings.Contains(err.Error(), "time limit") {
		return err
	}
	return nil
}

// wantGlobRefusedOrTimeLimit is for a glob that is costly to match: it may
// be refused, or the search may end at its time limit or before.
func wantGlobRefusedOrTimeLimit(res any, err error) error {
	if err != nil && !isArgError(err) && !strings.Contains(err.Error(), "time limit") {
		return err
	}
	return nil
}

func wantToolError(part string) outcome {
	return func(res any, err error) error {
		if err == nil || !strings.Contains(err.Error(), part) {
			return fmt.Errorf("got %v; want an error containing %q", err, part)
		}
		var v *sandbox.Violation
		if errors.As(err, &v) || errors.Is(err, context.Canceled) {
			return fmt.Errorf("got %T %v; want a tool or argument error", err, err)
		}
		return nil
	}
}

func TestHostileInputs(t *testing.T) {
	env := hostileWS(t)
	tools := map[string]tools.Tool{
		"read_file": NewReadFile(env), "write_file": NewWriteFile(env), "list_dir": NewListDir(env),
		"search": NewSearch(env), "bash": NewBash(env),
	}
	overDepth := deepName("d", sandbox.MaxDepth+1)
	withinDepth := deepName("d", sandbox.MaxDepth-1)
	overLength := deepName("d", 2100)
	longName := strings.Repeat("n", 256)
	aDotDot := strings.Repeat("e/../", 800) + "e"
	second := time.Second
	tests := []struct {
		tool, name string
		args       any
		bound      time.Duration
		want       outcome
	}{
		// read_file
		{"read_file", "FIFO", map[string]any{"path": "fifo"}, second, wantToolError("named pipe")},
		{"read_file", "sparse 4 GiB", map[string]any{"path": "sparse.bin", "encoding": "base64"}, second, func(res any, err error) error {
			if err != nil {
				return err
			}
			r := res.(*ReadFileResult)
			if !r.Truncated || r.SizeBytes != 4<<30 || len(r.Content) > 2<<20 {
				return fmt.Errorf("truncated %v size %d content %d bytes; want at most max_read_bytes read", r.Truncated, r.SizeBytes, len(r.Content))
			}
			return nil
		}},
		{"read_file", "path over MaxDepth", map[string]any{"path": overDepth + "/f.txt"}, second, wantToolError("1024 components")},
		{"read_file", "path over PATH_MAX", map[string]any{"path": overLength}, second, wantToolError("PATH_MAX")},
		{"read_file", "component over NAME_MAX", map[string]any{"path": "e/" + longName}, second, wantToolError("NAME_MAX")},
		{"read_file", "deep within limits", map[string]any{"path": withinDepth + "/nothere"}, second, wantToolError("no such file")},
		{"read_file", "thousands of a/../", map[string]any{"path": aDotDot + "/f.txt"}, second, wantToolError("no such file")},
		// write_file
		{"write_file", "FIFO target", map[string]any{"path": "fifo", "content": "x"}, second, wantToolError("named pipe")},
		{"write_file", "path over PATH_MAX", map[string]any{"path": overLength + "/x", "content": "x"}, second, wantToolError("PATH_MAX")},
		{"write_file", "component over NAME_MAX", map[string]any{"path": longName, "content": "x"}, second, wantToolError("NAME_MAX")},
		{"write_file", "deep new parents", map[string]any{"path": deepName("n", 1000) + "/x", "content": "x", "create_parents": true}, 2 * second, wantOK},
		// list_dir
		{"list_dir", "FIFO", map[string]any{"path": "fifo"}, second, wantToolError("not a directory")},
		{"list_dir", "deep tree, unbounded max_depth", map[string]any{"path": "d", "recursive": true, "max_depth": 1 << 30}, 2 * second, func(res any, err error) error {
			if err != nil {
				return err
			}
			if n := res.(*ListDirResult).Total; n > 2*sandbox.MaxDepth {
				return fmt.Errorf("total %d: the walk went below sandbox.MaxDepth", n)
			}
			return nil
		}},
		{"list_dir", "path over MaxDepth", map[string]any{"path": overDepth}, second, wantToolError("1024 components")},
		// search
		{"search", "tree with a FIFO", map[string]any{"query": "needle", "path": "tree"}, second, wantOK},
		{"search", "FIFO as the root", map[string]any{"query": "needle", "path": "fifo"}, second, wantToolError("named pipe")},
		{"search", "deep tree", map[string]any{"query": "needle", "path": "d"}, 2 * second, func(res any, err error) error {
			if err != nil {
				return err
			}
			if r := res.(*SearchResult); r.TotalMatches != 1 {
				return fmt.Errorf("total %d; want 1 (the file at depth 10; the deepest is below the limit)", r.TotalMatches)
			}
			return nil
		}},
		// The ignore files of every directory above the root are read
		// first: by path from the workspace root each, that was 1,023
		// lookups of up to 1,023 components (4 s of CPU).
		{"search", "root 1,023 deep", map[string]any{"query": "needle", "path": withinDepth}, second, wantOK},
		{"search", "sparse files", map[string]any{"query": "x", "glob": "sparse*"}, second, wantOK},
		{"search", "literal over a huge line", map[string]any{"query": "xy", "path": "long"}, second, wantOKUnlessRace},
		{"search", "dense literal over a huge line", map[string]any{"query": "x", "path": "long"}, hostileTimeout + second/2, wantOKOrTimeLimit},
		{"search", "(x+x+)+y over a huge line", map[string]any{"query": "(x+x+)+y", "is_regex": true, "path": "long"}, hostileTimeout + second/2, wantToolError("time limit")},
		{"search", "[a-z]{0,900}y over a huge line", map[string]any{"query": "[a-z]{0,900}y", "is_regex": true, "path": "long/one.txt"}, hostileTimeout + second/2, wantToolError("time limit")},
		{"search", "x*x*x*z without a prefilter", map[string]any{"query": "(?:x|xx)*z?$", "is_regex": true, "path": "long"}, hostileTimeout + second/2, wantToolError("time limit")},
		{"search", ".{0,1000}.{0,1000}z", map[string]any{"query": ".{0,1000}.{0,1000}z", "is_regex": true}, second, wantToolError("too large")},
		{"search", "(a{1,1000}){1,1000}", map[string]any{"query": "(a{1,1000}){1,1000}", "is_regex": true}, second, wantToolError("invalid repeat count")},
		{"search", "long case-insensitive literal through the regexp", map[string]any{"query": strings.Repeat("sé", 1300), "path": "long"}, hostileTimeout + second/2, wantOKOrTimeLimit},
		{"search", "query over the limit", map[string]any{"query": strings.Repeat("q", maxQueryBytes+1)}, second, wantToolError("limit is 4096")},
		{"search", "exponential glob", map[string]any{"query": "x", "glob": strings.Repeat("{a,aa}", 24) + "c"}, second, wantToolError("alternatives")},
		// Each of the 256 brace combinations scans the path for the long
		// literal at every start: about 0.5 s per file name, with no
		// check of the time limit within one name.
		{"search", "costly glob per name", map[string]any{"query": "x", "path": "g", "glob": strings.Repeat("{**/,**/}", 8) + "*" + strings.Repeat("a", 199) + "b"}, hostileTimeout + second/2, wantGlobRefusedOrTimeLimit},
		{"search", "costly glob within the limits", map[string]any{"query": "x", "path": "g", "glob": "{**/,**/}*" + strings.Repeat("a", 190) + "b"}, hostileTimeout + second/2, wantGlobRefusedOrTimeLimit},
		{"search", "root over PATH_MAX", map[string]any{"query": "x", "path": overLength}, second, wantToolError("PATH_MAX")},
		// bash
		{"bash", "working_dir FIFO", map[string]any{"command": "true", "working_dir": "fifo"}, second, wantToolError("not a directory")},
		{"bash", "working_dir over MaxDepth", map[string]any{"command": "true", "working_dir": overDepth}, second, wantToolError("1024 components")},
		{"bash", "working_dir deep within limits", map[string]any{"command": "true", "working_dir": deepName("e", 40)}, 2 * second, wantOK},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.name, func(t *testing.T) {
			start, cpu := time.Now(), cputime.Process()
			res, err := callTool(t, tools[tt.tool], tt.args)
			took, used := time.Since(start), cputime.Process()-cpu
			if e := tt.want(res, err); e != nil {
				t.Error(e)
			}
			if used > tt.bound {
				t.Errorf("used %v of CPU (%v by the wall clock); bound %v", used, took, tt.bound)
			}
			if took > hostileHang*tt.bound {
				t.Errorf("took %v by the wall clock (%v of CPU); bound %v for a call that blocks", took, used, hostileHang*tt.bound)
			}
		})
	}
}

// A pathological search cancelled mid-file returns promptly and leaves no
// work running: measured as the process's CPU time over a window after the
// call returned. Both workers are busy (two huge-line files) when the cancel
// comes.
func TestSearchCancelStopsCPU(t *testing.T) {
	dir := t.TempDir()
	line := []byte(strings.Repeat("x", hostileLineMB<<20-1) + "y")
	for _, name := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), line, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	line = nil
	lim := DefaultLimits()
	lim.DefaultTimeout = time.Minute // only the cancel may stop it
	tool := NewSearch(testEnv(t, dir, &lim))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := callToolCtx(ctx, t, tool, `{"query":"(x+x+)+y","is_regex":true}`)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // well into the regexp runs
	cancel()
	cancelled, cpu := time.Now(), cputime.Process()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v; want context.Canceled", err)
		}
		// Held to the CPU time spent between the cancel and the return,
		// not the wall time: on a loaded machine the last piece of work
		// before the check of the cancel waits for a core, and the wall
		// time grows with the load while the work does not.
		took, used := time.Since(cancelled), cputime.Process()-cpu
		t.Logf("returned %v after the cancel, %v of CPU", took, used)
		if used > 500*time.Millisecond {
			t.Errorf("%v of CPU (%v by the wall clock) between the cancel and the return; want well under 500ms", used, took)
		}
	case <-time.After(5 * time.Second): // a guard against a hang
		t.Fatal("the cancelled search had not returned after 5s")
	}
	before := cputime.Process()
	time.Sleep(300 * time.Millisecond)
	used := cputime.Process() - before
	t.Logf("CPU in the 300ms after: %v", used)
	if used > 60*time.Millisecond {
		t.Errorf("%v of CPU used in the 300ms after the cancelled search returned; want it stopped", used)
	}
}

// Every tool stops with the context's error when called cancelled, also
// where its work would be large (a 256 MiB read, a deep listing).
func TestToolsStopWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	mkChain(t, dir, "d", 200)
	f, err := os.Create(filepath.Join(dir, "sparse.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	lim := DefaultLimits()
	lim.MaxReadBytes = 256 << 20
	env := testEnv(t, dir, &lim)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		tool tools.Tool
		args string
	}{
		{NewReadFile(env), `{"path":"sparse.bin","encoding":"base64"}`},
		{NewListDir(env), `{"path":"d","recursive":true,"max_depth":100000}`},
		{NewSearch(env), `{"query":"(x+x+)+y","is_regex":true}`},
		{NewWriteFile(env), `{"path":"new.txt","content":"x"}`},
		{NewBash(env), `{"command":"sleep 10"}`},
	}
	// Not parallel, so the process's CPU time is the call's: a cancelled
	// call uses next to none (at most a GC cycle), where the whole read
	// uses seconds of it. Elapsed time is held only to a hang guard, far
	// below bash's sleep of 10 s.
	for _, tt := range tests {
		start, cpu := time.Now(), cputime.Process()
		_, err := callToolCtx(ctx, t, tt.tool, tt.args)
		used := cputime.Process() - cpu
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v; want context.Canceled", tt.tool.Spec().Name, err)
		}
		t.Logf("%s: %v of CPU", tt.tool.Spec().Name, used)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: took %v after the cancel", tt.tool.Spec().Name, took)
		}
		if used > time.Second {
			t.Errorf("%s: used %v of CPU after the cancel", tt.tool.Spec().Name, used)
		}
	}
	if _, err := os.Lstat(filepath.Join(env.WS.Dir, "new.txt")); err == nil {
		t.Error("a cancelled write_file wrote")
	}
}

// A tree of many deep chains side by side: the walk kept at most 64
// parent handles, and each directory whose parent's handle was not kept
// was opened by its whole path from the workspace root, so every chain
// past the 64th cost n*n/2 lookups for its n levels (130 chains of 600
// took 37 s of CPU). Listing 100 chains of 120 must cost about what 30
// chains of 400 cost (as many directories, within 64 chains):
// the CPU times are compared, so the test holds under load and -race.
func TestListDirWideDeepTree(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 24,000 directories")
	}
	list := func(chains, depth int) time.Duration {
		dir := t.TempDir()
		for i := range chains {
			mkChain(t, dir, fmt.Sprintf("c%03d", i), 1)
			mkChain(t, filepath.Join(dir, fmt.Sprintf("c%03d", i)), "d", depth)
		}
		env := testEnv(t, dir, nil)
		cpu := cputime.Process()
		res, err := callTool(t, NewListDir(env), map[string]any{"recursive": true, "max_depth": 100000})
		used := cputime.Process() - cpu
		if err != nil {
			t.Fatal(err)
		}
		// Each chain: its top and its f.txt, depth directories, two f.txt.
		if r, want := res.(*ListDirResult), chains*(1+depth+2+1); r.Total != want || len(r.Entries) != maxListEntries {
			t.Errorf("%d chains of %d: total %d, %d entries; want %d, %d", chains, depth, r.Total, len(r.Entries), want, maxListEntries)
		}
		return used
	}
	narrow := list(30, 400)
	wide := list(100, 120)
	t.Logf("30 chains of 400: %v of CPU; 100 chains of 120: %v", narrow, wide)
	if wide > 2*narrow+100*time.Millisecond {
		t.Errorf("100 chains of 120 used %v of CPU, 30 chains of 400 %v; want about the same (one open per directory)", wide, narrow)
	}
}
