package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestUpstreamThroughTheDaemon drives the whole gateway path with real
// parts: `clawd mcp add` stores a stdio upstream (another clawd, serving a
// second workspace), a running `clawd serve` picks it up without a restart,
// refuses to start it until its executable is allowlisted, then starts it,
// offers its tools once approved (clawd mcp approve) as inner__*, answers a call through the chain with the
// upstream's result, records status and tools for `clawd mcp list`, and
// leaves no upstream process behind when it exits.
func TestUpstreamThroughTheDaemon(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	inner := filepath.Join(e.Base, "inner")
	os.Mkdir(inner, 0o755)
	os.WriteFile(filepath.Join(inner, "note.txt"), []byte("from the inner workspace\n"), 0o644)
	b, err := os.ReadFile(clawdBin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	hexSum := hex.EncodeToString(sum[:])

	outer := e.Stdio("--client", "cc")
	c := outer.Client
	c.Initialize("upstream-test")
	if names := c.ToolNames(); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "inner__") }) {
		t.Fatalf("tools before any upstream was added: %v", names)
	}

	e.MustRun("mcp", "add", "inner", "--stdio", "--", clawdBin, "serve", "--transport", "stdio", "--client", "cc", "--workspace", inner)
	// Not allowlisted: the daemon does not start it, and says how to.
	row := waitServer(t, e, "inner", func(s map[string]any) bool { return s["last_status"] == "unavailable" })
	if msg, _ := row["last_error"].(string); !strings.Contains(msg, "clawd mcp allow --server inner --sha256 "+hexSum) {
		t.Fatalf("last_error %q does not give the allow line", msg)
	}

	e.MustRun("mcp", "allow", "--server", "inner", "--sha256", hexSum)
	row = waitServer(t, e, "inner", func(s map[string]any) bool { return s["last_status"] == "connected" })
	if n, _ := row["tool_count"].(float64); n != 5 {
		t.Errorf("tool_count %v, want the inner clawd's 5 tools", row["tool_count"])
	}
	// Connected, but its tools are new: offered only once approved.
	if names := c.ToolNames(); slices.Contains(names, "inner__read_file") {
		t.Fatalf("tools offered before their definitions were approved: %v", names)
	}
	e.MustRun("mcp", "approve", "inner", "--yes")
	if !c.WaitNotification("notifications/tools/list_changed", 10*time.Second) {
		t.Error("no tools/list_changed after the upstream's tools were approved")
	}
	names := waitTools(t, c, "listed inner__read_file", func(n []string) bool { return slices.Contains(n, "inner__read_file") })
	for _, want := range []string{"inner__read_file", "inner__bash", "read_file"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list %v lacks %s", names, want)
		}
	}

	r := c.CallTool("inner__read_file", map[string]any{"path": "note.txt"})
	if !r.ToolOK() || r.Result.StructuredContent["content"] != "from the inner workspace\n" {
		t.Fatalf("inner__read_file: %s", r)
	}
	// The upstream's own sandbox still holds: its workspace is its root.
	r = c.CallTool("inner__read_file", map[string]any{"path": "../ws/x"})
	if r.ToolOK() {
		t.Errorf("the upstream read outside its workspace: %s", r)
	}
	tools := mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "inner", "--json"))
	if len(tools) != 5 {
		t.Errorf("mcp tools inner: %d tools cached, want 5", len(tools))
	}

	// Closing the outer daemon's stdin ends it, and with it the upstream.
	outer.Stdin.Close()
	if code := outer.Wait(15 * time.Second); code != 0 {
		t.Errorf("outer clawd exited %d", code)
	}
	if runtime.GOOS == "linux" {
		deadline := time.Now().Add(10 * time.Second)
		for pids := processesWith(inner); len(pids) > 0; pids = processesWith(inner) {
			if time.Now().After(deadline) {
				t.Fatalf("upstream processes %v outlived the daemon", pids)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// waitServer polls `clawd mcp list --json` until the named server's row
// satisfies ok (15 s at most) and returns it.
func waitServer(t *testing.T, e *clawdtest.Env, name string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, s := range mustJSON[[]map[string]any](t, e.MustRun("mcp", "list", "--json")) {
			if s["name"] == name && ok(s) {
				return s
			}
			if s["name"] == name && time.Now().After(deadline) {
				t.Fatalf("server %s never reached the expected state: %v", name, s)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s is not listed", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesWith lists the pids whose command line mentions s (Linux).
func processesWith(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestMCPTestCommand: `clawd mcp test NAME` connects once without a daemon,
// behind the same allowlist check the daemon applies, and prints what it
// found; it registers and records nothing.
func TestMCPTestCommand(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	inner := filepath.Join(e.Base, "inner")
	os.Mkdir(inner, 0o755)
	e.MustRun("mcp", "add", "inner", "--stdio", "--disabled", "--", clawdBin, "serve", "--transport", "stdio", "--client", "cc", "--workspace", inner)

	b, _ := os.ReadFile(clawdBin)
	sum := sha256.Sum256(b)
	hexSum := hex.EncodeToString(sum[:])
	_, errOut, code := e.Run("mcp", "test", "inner")
	if code != 1 || !strings.Contains(errOut, "clawd mcp allow --server inner --sha256 "+hexSum) {
		t.Fatalf("test before allow: exit %d, stderr %q; want 1 and the allow line", code, errOut)
	}
	e.MustRun("mcp", "allow", "--server", "inner", "--sha256", hexSum)
	out := e.MustRun("mcp", "test", "inner")
	if !strings.Contains(out, "inner: clawde-mcp") || !strings.Contains(out, "connected in") || !strings.Contains(out, "inner__read_file") {
		t.Errorf("mcp test output:\n%s", out)
	}
	res := mustJSON[map[string]any](t, e.MustRun("mcp", "test", "inner", "--json"))
	if tools, _ := res["tools"].([]any); len(tools) != 5 || res["server_name"] != "clawde-mcp" {
		t.Errorf("mcp test --json: %v", res)
	}
	// Nothing recorded: the server is still disabled and never connected.
	row := mustJSON[map[string]any](t, e.MustRun("mcp", "show", "inner", "--json"))
	if row["enabled"] != false || row["last_status"] != "disconnected" {
		t.Errorf("mcp test changed the stored server: %v", row)
	}
	if _, _, code := e.Run("mcp", "test", "clawd"); code != 2 {
		t.Errorf("mcp test of the built-in server: exit %d, want 2", code)
	}
	if _, _, code := e.Run("mcp", "test", "nosuch"); code != 1 {
		t.Errorf("mcp test of an unknown server: exit %d, want 1", code)
	}
}
