package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// escapeCall is one tool call whose path argument must not leave the
// workspace.
type escapeCall struct {
	tool string
	args map[string]any
	path string // the offending path argument, expected in data.path
}

// callsFor builds, for one offending path, a call of every tool that takes a
// path: read_file, write_file (with and without create_parents), list_dir,
// search's root and bash's working_dir.
func callsFor(p string) []escapeCall {
	return []escapeCall{
		{"read_file", map[string]any{"path": p}, p},
		{"write_file", map[string]any{"path": p, "content": "pwned\n"}, p},
		{"write_file", map[string]any{"path": p + "/new.txt", "content": "pwned\n", "create_parents": true}, p + "/new.txt"},
		{"list_dir", map[string]any{"path": p, "recursive": true}, p},
		{"search", map[string]any{"query": "SECRET", "path": p}, p},
		{"bash", map[string]any{"command": "cat secret.txt; echo pwned > pwned.txt", "working_dir": p}, p},
	}
}

// assertSandboxViolations sends every call over a raw stdio session (to see
// the exact JSON-RPC error) and checks each is refused with -32005, names
// the path, leaks nothing, and leaves the outside untouched.
func assertSandboxViolations(t *testing.T, e *env, paths []string) {
	t.Helper()
	before := e.snapshot()
	r := e.Stdio()
	r.Initialize("claude-code")
	for _, p := range paths {
		for _, c := range callsFor(p) {
			resp := r.CallTool(c.tool, c.args)
			if resp.Error == nil {
				t.Errorf("%s %v: not refused: %s", c.tool, c.args, resp.Raw)
				continue
			}
			if want := "sandbox_violation: " + strconv.Quote(c.path) + ": "; resp.Error.Code != -32005 || !strings.HasPrefix(resp.Error.Message, want) {
				t.Errorf("%s %v: error %d %q, want -32005 %q...", c.tool, c.args, resp.Error.Code, resp.Error.Message, want)
			}
			if resp.Error.Data["path"] != c.path {
				t.Errorf("%s %v: data.path = %v, want %q", c.tool, c.args, resp.Error.Data["path"], c.path)
			}
			if strings.Contains(resp.Raw, "TOP SECRET") {
				t.Errorf("%s %v: response leaks outside content: %s", c.tool, c.args, resp.Raw)
			}
		}
	}
	e.assertUnchanged(before)
	if _, err := os.Stat(filepath.Join(e.WS, "pwned.txt")); err == nil {
		t.Error("bash ran although its working_dir was refused")
	}
}

// The spec's test_sandbox_guard_rejects_path_traversal: path arguments with
// "..", absolute paths elsewhere and a same-prefix sibling are refused by
// the SandboxGuard with -32005 before any tool runs.
func Test_sandbox_guard_rejects_path_traversal(t *testing.T) {
	e := newEnv(t)
	e.Write("sub/file.txt", "inside\n")
	assertSandboxViolations(t, e, []string{
		"..",
		"../outside",
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		"./sub/../..",
		e.outside,
		filepath.Join(e.outside, "secret.txt"),
		e.evil, // /ws_evil is not inside /ws
		filepath.Join(e.evil, "evil.txt"),
		"/",
		"/etc",
	})
}

// The spec's test_sandbox_guard_rejects_symlink_escape: symlinks that lead
// outside, as the final or an intermediate component, dangling, chained or
// absolute, are refused with -32005 and nothing outside is read or changed.
func Test_sandbox_guard_rejects_symlink_escape(t *testing.T) {
	e := newEnv(t)
	e.Write("sub/file.txt", "inside\n")
	links := map[string]string{
		"out_dir":      e.outside,                               // absolute, to a directory
		"out_file":     filepath.Join(e.outside, "secret.txt"),  // absolute, to a file
		"out_rel":      "../outside",                            // relative
		"dangling":     filepath.Join(e.outside, "not-yet.txt"), // dangling, would create outside
		"sub/up":       "../../outside",                         // climbs out from a subdirectory
		"chain":        "out_rel",                               // chained
		"evil_sibling": "../ws_evil",                            // same-prefix sibling
		"abs_inside":   filepath.Join(e.WS, "sub"),              // absolute even if inside: os.Root refuses
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(e.WS, name)); err != nil {
			t.Fatal(err)
		}
	}
	assertSandboxViolations(t, e, []string{
		"out_dir", "out_dir/secret.txt",
		"out_file",
		"out_rel", "out_rel/secret.txt",
		"dangling",
		"sub/up", "sub/up/secret.txt",
		"chain/secret.txt",
		"evil_sibling/evil.txt",
		"abs_inside/file.txt",
	})
	// Symlinks that stay inside still work: they are not escapes.
	if err := os.Symlink("sub", filepath.Join(e.WS, "in_rel")); err != nil {
		t.Fatal(err)
	}
	r := e.Stdio()
	r.Initialize("claude-code")
	resp := r.CallTool("read_file", map[string]any{"path": "in_rel/file.txt"})
	if resp.Error != nil || resp.Result == nil || resp.Result.StructuredContent["content"] != "inside\n" {
		t.Errorf("in-workspace symlink: %s", resp.Raw)
	}
}
