//go:build unix

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

func TestNameRuleMatch(t *testing.T) {
	tests := []struct {
		rule nameRule
		full []string
		want bool
	}{
		{nameRule{path: []string{"mcp-server.toml"}}, []string{"mcp-server.toml"}, true},
		{nameRule{path: []string{"mcp-server.toml"}}, []string{"mcp-server.toml.bak"}, false},
		{nameRule{path: []string{".clawde-token-"}, prefix: true}, []string{".clawde-token-ws-1234.cc"}, true},
		{nameRule{path: []string{".clawde-token-"}, prefix: true}, []string{"x.clawde-token-"}, false},
		// A missing parent: only the exact path is refused, not the first
		// directory (~/.claude/settings.json stays writable).
		{nameRule{path: []string{".claude", "hooks", ".clawde-token-"}, prefix: true}, []string{".claude", "hooks", ".clawde-token-x"}, true},
		{nameRule{path: []string{".claude", "hooks", ".clawde-token-"}, prefix: true}, []string{".claude", "settings.json"}, false},
		{nameRule{path: []string{".claude", "hooks", ".clawde-token-"}, prefix: true}, []string{".claude", "hooks", "my-hook.sh"}, false},
		// A directory: it and everything below it.
		{nameRule{path: []string{"clawde"}, dir: true}, []string{"clawde"}, true},
		{nameRule{path: []string{"clawde"}, dir: true}, []string{"clawde", "sub", "x"}, true},
		{nameRule{path: []string{"clawde"}, dir: true}, []string{"clawde2"}, false},
		{nameRule{path: []string{".local", "share", "clawde"}, dir: true}, []string{".local", "share", "other"}, false},
	}
	for _, tt := range tests {
		if got := tt.rule.match(tt.full); got != tt.want {
			t.Errorf("%+v.match(%q) = %v, want %v", tt.rule, tt.full, got, tt.want)
		}
	}
}

func TestInsideByIdentity(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	for _, d := range []string{filepath.Join(ws, "a", "b"), base + "/ws_evil", base + "/other"} {
		os.MkdirAll(d, 0o700)
	}
	os.Symlink(ws, filepath.Join(base, "other", "link"))
	root, _ := statID(ws)
	for p, want := range map[string]bool{
		ws:                                  true,
		filepath.Join(ws, "a", "b"):         true,
		filepath.Join(base, "other/link/a"): true, // the root through another spelling
		base + "/ws_evil":                   false,
		base:                                false,
		filepath.Join(ws, "..", "other"):    false,
	} {
		if got := insideByIdentity(root, p); got != want {
			t.Errorf("insideByIdentity(%s) = %v, want %v", p, got, want)
		}
	}
}

// TestGuardFollowsRenameIntoProtectedDir: an inode moved into a protected
// directory after the snapshot is refused through any name it has, even a
// hard link that sat in the workspace before (rename updates its ctime, so
// the check does not answer from the stale snapshot).
func TestGuardFollowsRenameIntoProtectedDir(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(ws, "data")
	os.Mkdir(data, 0o700)
	os.WriteFile(filepath.Join(ws, "x"), []byte("secret"), 0o600)
	if err := os.Link(filepath.Join(ws, "x"), filepath.Join(ws, "y")); err != nil {
		t.Skip("no hard links here:", err)
	}
	w, err := Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	g := NewGuard(w, ProtectedSet{Dirs: []Protected{{Path: data, Why: "data"}}})
	time.Sleep(2 * racyWindow)
	fi, _ := os.Stat(filepath.Join(ws, "y"))
	if why := g.ObjectWhy(fi); why != "" {
		t.Fatalf("y protected before the move: %s", why)
	}
	if err := os.Rename(filepath.Join(ws, "x"), filepath.Join(data, "x")); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(filepath.Join(ws, "y"))
	if why := g.ObjectWhy(fi); why != "data" {
		t.Errorf("y after x moved into the data dir: %q, want it protected", why)
	}
}

// TestGuardInactiveOutside: state outside the workspace makes the guard
// inactive, so tools skip every check.
func TestGuardInactiveOutside(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws, data := filepath.Join(base, "ws"), filepath.Join(base, "data")
	os.Mkdir(ws, 0o700)
	os.Mkdir(data, 0o700)
	w, err := Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	g := NewGuard(w, ProtectedSet{Dirs: []Protected{{Path: data, Why: "d"}}, Files: []Protected{{Path: filepath.Join(base, "cfg.toml"), Why: "c"}}})
	if g.Active() || len(g.Inside()) != 0 {
		t.Errorf("active=%v inside=%v for state outside the workspace", g.Active(), g.Inside())
	}
	var nilGuard *Guard
	if nilGuard.Active() || nilGuard.ObjectWhy(nil) != "" {
		t.Error("a nil guard must protect nothing and not panic")
	}
}

// TestWriteWhyEndsWithItsContext: the judgement of a name to be written
// resolves its directory through the call's context. A cancelled call gets
// the context's error, never a judgement of the lexical path (which a
// symlink to clawd's state would pass); a live one is judged where the
// links lead.
func TestWriteWhyEndsWithItsContext(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(ws, "data")
	os.Mkdir(data, 0o700)
	// A path of more components than the walk takes between looks at its
	// context, ending in a link to the protected directory.
	deep := strings.Repeat("d/", cancelCheckSteps+2)
	if err := os.MkdirAll(filepath.Join(ws, deep), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(strings.Repeat("../", cancelCheckSteps+2)+"data", filepath.Join(ws, deep, "link")); err != nil {
		t.Fatal(err)
	}
	w, err := Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	NewGuard(w, ProtectedSet{Dirs: []Protected{{Path: data, Why: "clawd's data"}}})
	dir := deep + "link"

	why, err := w.WriteWhy(context.Background(), dir, "x")
	if err != nil || why == "" {
		t.Fatalf("WriteWhy through a link to the data dir = %q, %v; want it refused", why, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if why, err := w.WriteWhy(ctx, dir, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteWhy with a cancelled context = %q, %v; want context.Canceled", why, err)
	}
	if err := w.CheckState(ctx, dir+"/x", AccessWrite); !errors.Is(err, context.Canceled) {
		t.Errorf("CheckState with a cancelled context = %v; want context.Canceled", err)
	}
}

// TestWriteWhyDeepIsLinear: the deepest existing directory of a path to be
// made (create_parents) was found by a Stat of every prefix from the root,
// deepest first: with 512 levels existing and 511 to make, 511 lookups of
// 512 components (0.7 s of CPU in the chain's check and again in the
// tool's). It must cost about what resolving the path costs. CPU times are
// compared, so load and -race do not matter.
func TestWriteWhyDeepIsLinear(t *testing.T) {
	base, w := newWS(t)
	ws := filepath.Join(base, "ws")
	mkDeep(t, ws, "e", 512)
	if err := os.MkdirAll(filepath.Join(ws, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	NewGuard(w, ProtectedSet{Dirs: []Protected{{Path: filepath.Join(ws, "state"), Why: "d"}}})
	if !w.Guard().Active() {
		t.Fatal("guard not active")
	}
	p := deepPath("e", 512) + "/" + deepPath("n", 510) + "/x"
	cpu := cputime.Process()
	if _, err := w.Check(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	check := cputime.Process() - cpu
	cpu = cputime.Process()
	if err := w.CheckState(context.Background(), p, AccessWrite); err != nil {
		t.Fatal(err)
	}
	state := cputime.Process() - cpu
	t.Logf("Check %v, CheckState %v of CPU", check, state)
	if state > 5*check+50*time.Millisecond {
		t.Errorf("CheckState used %v of CPU where resolving the path used %v", state, check)
	}
	// Still judged at the deepest existing directory: a protected name
	// below it is refused.
	if why, err := w.WriteWhy(context.Background(), "state/sub", "x"); err != nil || why == "" {
		t.Errorf("WriteWhy(state/sub, x) = %q, %v; want the data directory's refusal", why, err)
	}
	if why, err := w.WriteWhy(context.Background(), deepPath("e", 512)+"/new", "x"); err != nil || why != "" {
		t.Errorf("WriteWhy(deep/new, x) = %q, %v; want no refusal", why, err)
	}
}
