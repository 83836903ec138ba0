package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/cputime"
)

// mkDeep creates depth nested directories named name below dir, one
// mkdirat at a time relative to its parent (the full path may exceed
// PATH_MAX, which a path-based MkdirAll could not create).
func mkDeep(t *testing.T, dir, name string, depth int) {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for range depth {
		if err := r.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := r.OpenRoot(name)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		r = next
	}
	r.Close()
}

func deepPath(name string, depth int) string {
	return strings.TrimSuffix(strings.Repeat(name+"/", depth), "/")
}

// TestPathLimits is the table of hostile path arguments: each is answered
// within its time bound, over-limit ones with an *InvalidPathError naming
// the limit. The prefix-by-prefix walk this replaced took seconds to
// minutes on the deep ones (each component re-walked the whole prefix).
//
// The bound holds the CPU time the process spends in the call (user and
// system: the walk is mostly system calls), which a loaded machine or the
// race detector's scheduling does not inflate as it does the wall time. The
// wall time is held only to pathLimitsHang times the bound, a guard against
// a call that blocks.
// pathLimitsHang is how many times its bound a Resolve in TestPathLimits
// may take by the wall clock.
const pathLimitsHang = 20

func TestPathLimits(t *testing.T) {
	base, w := newWS(t)
	ws := filepath.Join(base, "ws")
	mkDeep(t, ws, "d", 2100)       // deeper than MaxDepth and than PATH_MAX allows to name
	mkDeep(t, ws, "e", MaxDepth-1) // within the limits
	// A symlink whose target climbs and descends through the deep tree:
	// resolving a path through it many times must stay within the step cap.
	if err := os.Symlink(strings.Repeat("../", 20)+deepPath("e", 20), filepath.Join(ws, deepPath("e", 20), "zig")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(ws, "self")); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", MaxNameBytes+1)
	tests := []struct {
		name    string
		in      string
		want    string // the resolution, when it is accepted
		limit   string // the text the refusal must contain
		inval   bool
		violate bool
		bound   time.Duration
	}{
		{name: "within limits, deep and existing", in: deepPath("e", MaxDepth-1), want: deepPath("e", MaxDepth-1), bound: time.Second},
		{name: "deep, new file at the end", in: deepPath("e", MaxDepth-1) + "/new", want: deepPath("e", MaxDepth-1) + "/new", bound: time.Second},
		{name: "more components than MaxDepth", in: deepPath("d", MaxDepth+1), limit: "1024 components", inval: true, bound: 100 * time.Millisecond},
		{name: "longer than PATH_MAX", in: deepPath("d", 2100), limit: "limit is 4096 bytes", inval: true, bound: 100 * time.Millisecond},
		{name: "absolute and longer than PATH_MAX", in: filepath.Join(ws, deepPath("d", 2100)), limit: "PATH_MAX", inval: true, bound: 100 * time.Millisecond},
		{name: "component longer than NAME_MAX", in: "d/" + long, limit: "NAME_MAX", inval: true, bound: 100 * time.Millisecond},
		{name: "thousands of a/../", in: strings.Repeat("d/../", 800) + "d", want: "d", bound: time.Second},
		{name: "a/../ past PATH_MAX", in: strings.Repeat("d/../", 1000) + "d", limit: "PATH_MAX", inval: true, bound: 100 * time.Millisecond},
		{name: "symlink to . repeated past the hop limit", in: deepPath("self", 41) + "/x", limit: "too many levels", violate: true, bound: time.Second},
		{name: "climbing symlink followed repeatedly", in: deepPath("e", 20) + "/zig/zig/zig/zig/zig/zig/zig/zig/x", want: deepPath("e", 20) + "/x", bound: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, cpu := time.Now(), cputime.Process()
			res, err := w.Resolve(context.Background(), tt.in)
			took, used := time.Since(start), cputime.Process()-cpu
			if used > tt.bound {
				t.Errorf("used %v of CPU (%v by the wall clock), bound %v", used, took, tt.bound)
			}
			if took > pathLimitsHang*tt.bound {
				t.Errorf("took %v by the wall clock (%v of CPU), bound %v for a call that blocks", took, used, pathLimitsHang*tt.bound)
			}
			var ip *InvalidPathError
			var v *Violation
			switch {
			case tt.inval:
				if !errors.As(err, &ip) || !strings.Contains(err.Error(), tt.limit) {
					t.Fatalf("Resolve = %.60q, %v; want an invalid-path error naming %q", res, err, tt.limit)
				}
				if len(err.Error()) > 400 {
					t.Errorf("error message is %d bytes; the path must be clipped", len(err.Error()))
				}
			case tt.violate:
				if !errors.As(err, &v) || !strings.Contains(err.Error(), tt.limit) {
					t.Fatalf("Resolve = %.60q, %v; want a violation naming %q", res, err, tt.limit)
				}
			default:
				if err != nil || res != tt.want {
					t.Fatalf("Resolve = %.80q, %v; want %.80q", res, err, tt.want)
				}
			}
			// Check and every tool's Rel answer the same way.
			if _, err2 := w.Rel(tt.in); tt.inval != errors.As(err2, &ip) {
				t.Errorf("Rel = %v; invalid-path expected: %v", err2, tt.inval)
			}
		})
	}
}

// A cancelled context stops the walk of a deep path.
func TestWalkCancelled(t *testing.T) {
	base, w := newWS(t)
	mkDeep(t, filepath.Join(base, "ws"), "e", MaxDepth-1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Check(ctx, deepPath("e", MaxDepth-1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Check with a cancelled context = %v; want context.Canceled", err)
	}
}

// The cursor holds few descriptors however deep the walk goes.
func TestCursorHandles(t *testing.T) {
	base, w := newWS(t)
	mkDeep(t, filepath.Join(base, "ws"), "e", 100)
	c := cursor{root: w.Root}
	defer c.close()
	for range 100 {
		if err := c.down("e"); err != nil {
			t.Fatal(err)
		}
	}
	open := 0
	for _, h := range c.hs {
		if h != nil {
			open++
		}
	}
	if open > 100/checkpointEvery+1 {
		t.Errorf("%d handles open at depth 100", open)
	}
	if err := c.up(37); err != nil {
		t.Fatal(err)
	}
	fi, err := c.dir().Stat(".")
	want, err2 := w.Root.Stat(deepPath("e", 63))
	if err != nil || err2 != nil || !os.SameFile(fi, want) {
		t.Errorf("after up(37) the cursor is not at depth 63: %v %v", err, err2)
	}
}
