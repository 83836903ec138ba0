package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/test/clawdtest"
)

// TestUnknownToolKeyRefused: [tools] is checked against the registry's
// tools when the daemon starts and on reload, with the error naming the
// key and the known tools (as config's own check did before).
func TestUnknownToolKeyRefused(t *testing.T) {
	home := clawdtest.IsolateHome(t)
	file := filepath.Join(home, "c.toml")
	os.WriteFile(file, []byte("[tools]\nbsh = false\n"), 0o600)
	_, err := New(Options{Workspace: t.TempDir(), ConfigFile: file})
	want := "config " + file + ": [tools] bsh: unknown tool; known tools are bash, read_file, write_file, list_dir, search"
	if err == nil || err.Error() != want {
		t.Fatalf("New = %v, want %q", err, want)
	}

	d := newTestDaemon(t, "[tools]\nbash = false\n")
	os.WriteFile(d.ConfigFile, []byte("[tools]\nfs__stat = false\n"), 0o600)
	if err := d.Reload("test"); err == nil || !strings.Contains(err.Error(), "[tools] fs__stat: unknown tool") {
		t.Fatalf("reload with an unknown tool = %v", err)
	}
	if d.Config().ToolEnabled("bash") {
		t.Error("a refused reload replaced the running config")
	}
	// Once a provider serves the tool, the key is accepted.
	d.Server.Registry.Add(&tools.StaticProvider{Name: "fs", Source: tools.LocalOrigin("/nonexistent/fs"),
		List: []tools.Tool{stubTool("fs__stat")}})
	if err := d.Reload("test"); err != nil {
		t.Fatalf("reload naming a registered upstream tool: %v", err)
	}
}

type stubTool string

func (s stubTool) Spec() *tools.Spec {
	return &tools.Spec{Name: string(s), Permission: tools.PermUpstream}
}
func (s stubTool) Call(context.Context, jsontext.Value) (any, error) {
	return nil, nil
}

// TestHealthCountsThroughChain: active_tools counts what the chain would
// let anyone call: a remote server's tools and a non-allowlisted binary's
// are registered but not active, like a tool switched off in [tools].
func TestHealthCountsThroughChain(t *testing.T) {
	d := newTestDaemon(t, "")
	builtins := d.Health().ActiveTools
	d.Server.Registry.Add(&tools.StaticProvider{Name: "cloud", Source: tools.RemoteOrigin("https://x.example/mcp"),
		List: []tools.Tool{stubTool("cloud__a"), stubTool("cloud__b")}})
	d.Server.Registry.Add(&tools.StaticProvider{Name: "fs", Source: tools.LocalOrigin("/nonexistent/fs"),
		List: []tools.Tool{stubTool("fs__stat")}})
	if got := d.Health().ActiveTools; got != builtins {
		t.Errorf("active_tools = %d with refused upstream tools registered, want %d", got, builtins)
	}
	if got, all := len(d.Server.Registry.All()), builtins+3; got != all {
		t.Fatalf("registry has %d tools, want %d", got, all)
	}
}

// TestHealthDoesNotAllocate: GET /health builds its object without heap
// allocations (its SLO is p99 < 5 ms on a busy machine).
func TestHealthDoesNotAllocate(t *testing.T) {
	d := newTestDaemon(t, "[tools]\nread_file = false\n")
	if n := testing.AllocsPerRun(200, func() { d.Health() }); n != 0 {
		t.Errorf("Health allocates %.0f times per call, want 0", n)
	}
}
