package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newWS builds base/ws with links of every kind, base/outside and the
// prefix sibling base/ws_evil, and opens base/ws through a symlinked alias
// (base/alias -> ws) so both spellings of the root are exercised.
func newWS(t *testing.T) (base string, w *Workspace) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"ws/sub/deeper", "outside", "ws_evil"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"ws/in_link":       "sub",
		"ws/in_abs":        filepath.Join(base, "ws", "sub"),
		"ws/sub/up_in":     "../sub/deeper",
		"ws/sub/up_out":    "../..",
		"ws/out":           "../outside",
		"ws/out_abs":       filepath.Join(base, "outside"),
		"ws/dangling_out":  "../outside/missing",
		"ws/dangling_in":   "sub/missing",
		"ws/chain1":        "chain2",
		"ws/chain2":        "out",
		"ws/loop1":         "loop2",
		"ws/loop2":         "loop1",
		"ws/evil":          "../ws_evil",
		"ws/missing_climb": "nothere/../../outside",
		"alias":            "ws",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(base, l)); err != nil {
			t.Fatal(err)
		}
	}
	w, err = Open(filepath.Join(base, "alias"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return base, w
}

func TestOpenCanonical(t *testing.T) {
	base, w := newWS(t)
	if w.Dir != filepath.Join(base, "ws") {
		t.Errorf("Dir = %q, want the canonical %q", w.Dir, filepath.Join(base, "ws"))
	}
	for _, bad := range []string{filepath.Join(base, "nope"), filepath.Join(base, "ws", "in_link", "..", "..", "x")} {
		if _, err := Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
	f := filepath.Join(base, "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Open(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Open(file) = %v", err)
	}
}

func TestRel(t *testing.T) {
	base, w := newWS(t)
	tests := []struct {
		in        string
		want      string
		violation bool
		invalid   bool
	}{
		{in: "", want: "."},
		{in: ".", want: "."},
		{in: "a/b", want: "a/b"},
		{in: "./a//b/", want: "a/b"},
		{in: "a/../b", want: "b"},
		{in: "a/..", want: "."},
		{in: filepath.Join(base, "ws"), want: "."},
		{in: filepath.Join(base, "ws", "x/y"), want: "x/y"},
		{in: filepath.Join(base, "alias", "x"), want: "x"}, // the configured spelling
		{in: filepath.Join(base, "ws", "x", "..", "..", "ws", "y"), want: "y"},
		{in: "..", violation: true},
		{in: "../ws/x", violation: true}, // lexically outside, even if it comes back
		{in: "a/../../b", violation: true},
		{in: filepath.Join(base, "outside"), violation: true},
		{in: filepath.Join(base, "ws_evil"), violation: true}, // shares the prefix
		{in: filepath.Join(base, "ws_evil", "x"), violation: true},
		{in: filepath.Join(base, "ws", ".."), violation: true},
		{in: "/", violation: true},
		{in: "a\x00b", invalid: true},
	}
	for _, tt := range tests {
		got, err := w.Rel(tt.in)
		var v *Violation
		var ip *InvalidPathError
		switch {
		case tt.violation:
			if !errors.As(err, &v) || v.Path != tt.in {
				t.Errorf("Rel(%q) = %q, %v; want a violation naming the path", tt.in, got, err)
			}
		case tt.invalid:
			if !errors.As(err, &ip) {
				t.Errorf("Rel(%q) = %q, %v; want InvalidPathError", tt.in, got, err)
			}
		default:
			if err != nil || got != tt.want {
				t.Errorf("Rel(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		}
	}
}

func TestCheckAndResolve(t *testing.T) {
	base, w := newWS(t)
	tests := []struct {
		in        string
		resolved  string // "" with violation
		violation bool
	}{
		{in: "", resolved: "."},
		{in: "sub/deeper", resolved: "sub/deeper"},
		{in: "in_link", resolved: "sub"},
		{in: "in_link/x.txt", resolved: "sub/x.txt"},
		{in: "sub/up_in/f", resolved: "sub/deeper/f"},
		{in: "dangling_in", resolved: "sub/missing"},
		{in: "new/dir/file", resolved: "new/dir/file"},
		{in: filepath.Join(base, "alias", "in_link"), resolved: "sub"},
		{in: "out", violation: true},
		{in: "out/secret", violation: true},
		{in: "out_abs/x", violation: true},
		// os.Root refuses every absolute symlink target, so Check does too,
		// even for a target inside the workspace.
		{in: "in_abs/x", violation: true},
		{in: "sub/up_out", violation: true},
		{in: "sub/up_out/outside", violation: true},
		{in: "dangling_out", violation: true},
		{in: "chain1/x", violation: true},
		{in: "loop1", violation: true}, // too many levels
		{in: "evil/x", violation: true},
		{in: "missing_climb", violation: true},
		{in: "../outside", violation: true},
		{in: filepath.Join(base, "ws_evil"), violation: true},
	}
	for _, tt := range tests {
		rel, cerr := w.Check(context.Background(), tt.in)
		res, rerr := w.Resolve(context.Background(), tt.in)
		var v *Violation
		if tt.violation {
			if !errors.As(cerr, &v) || !errors.As(rerr, &v) {
				t.Errorf("%q: Check = %q, %v; Resolve = %q, %v; want violations", tt.in, rel, cerr, res, rerr)
			}
			continue
		}
		wantRel, _ := w.Rel(tt.in)
		if cerr != nil || rel != wantRel {
			t.Errorf("Check(%q) = %q, %v; want %q", tt.in, rel, cerr, wantRel)
		}
		if rerr != nil || res != tt.resolved {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.in, res, rerr, tt.resolved)
		}
	}
}

// IsEscape recognises os.Root's refusal, which AsViolation turns into a
// Violation naming the caller's path; other errors pass through.
func TestIsEscape(t *testing.T) {
	_, w := newWS(t)
	_, err := w.Root.Open("out/x")
	if !IsEscape(err) {
		t.Fatalf("os.Root error %v not recognised as an escape", err)
	}
	var v *Violation
	if !errors.As(AsViolation("out/x", err), &v) || v.Path != "out/x" {
		t.Errorf("AsViolation = %v", AsViolation("out/x", err))
	}
	_, err = w.Root.Open("nothere")
	if IsEscape(err) || AsViolation("nothere", err) != err {
		t.Errorf("not-exist treated as escape: %v", err)
	}
	if IsEscape(nil) {
		t.Error("IsEscape(nil)")
	}
}

// A violation's reason names the symlink that leads out by the directories
// it was reached through, and those names come from the disk, not from the
// caller: a directory named with a line break (or a terminal escape) must
// not put one into the -32005 message or the audit row's reason, and a
// chain of long names must not make the reason kilobytes long.
func TestViolationReasonShowsDiskNamesSafely(t *testing.T) {
	base, w := newWS(t)
	forged := "d\n[audit] FORGED \x1b[2J"
	long := strings.Repeat("n", 250)
	deep := filepath.Join(base, "ws", forged, long, long, long, long, long, long)
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(deep, "out")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(base, "ws"), filepath.Join(deep, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, filepath.Join(base, "ws", "x")); err != nil {
		t.Fatal(err)
	}
	_, err = w.Check(context.Background(), "x/passwd")
	var v *Violation
	if !errors.As(err, &v) {
		t.Fatalf("err = %v; want a *Violation", err)
	}
	if strings.ContainsAny(v.Reason, "\n\x1b") {
		t.Errorf("reason %q holds a control character from a directory name", v.Reason)
	}
	if len(v.Reason) > 512 {
		t.Errorf("reason is %d bytes long: %.80q...", len(v.Reason), v.Reason)
	}
}
