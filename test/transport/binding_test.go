//go:build linux || darwin

package transport_e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestBindingsPerClientOnOneDaemon: one socket daemon with one upstream
// server (a second clawd) and two clients that present per-client
// credentials of different kinds. After `clawd trust bind` for the cc
// entity, each client's tools/list shows its own set of upstream tools, a
// call outside the binding is refused by the chain, and oc, which has no
// binding, still gets every upstream tool.
func TestBindingsPerClientOnOneDaemon(t *testing.T) {
	e := &identityEnv{env: newEnv(t), creds: map[string]string{}}
	for _, kind := range []string{"cc", "oc"} {
		out, errOut, code := e.Run("token", "issue", "--client", kind, "--label", "binding "+kind)
		if code != 0 {
			t.Fatalf("token issue --client %s: %s", kind, errOut)
		}
		e.creds[kind] = strings.TrimSpace(out)
	}
	inner := filepath.Join(e.Base, "inner")
	os.Mkdir(inner, 0o755)
	b, err := os.ReadFile(clawdBin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	e.MustRun("mcp", "add", "inner", "--stdio", "--", clawdBin, "serve", "--transport", "stdio", "--client", "cc", "--workspace", inner)
	e.MustRun("mcp", "allow", "--server", "inner", "--sha256", hex.EncodeToString(sum[:]))
	e.serve("--transport", "unix_socket")
	e.sock = e.State("unix").Socket

	oc := e.socketAs(t, "oc")
	oc.Initialize("oc-client")
	upstreamOf := func(names []string) []string {
		var out []string
		for _, n := range names {
			if strings.HasPrefix(n, "inner__") {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out
	}
	deadline := time.Now().Add(30 * time.Second)
	var all []string
	approved := false
	for len(all) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("the upstream's tools never appeared: %v", all)
		}
		time.Sleep(100 * time.Millisecond)
		// New upstream tools are offered only once approved, and approving
		// needs the daemon to have seen them first (docs/upstreams.md).
		if !approved {
			_, _, code := e.Run("mcp", "approve", "inner", "--yes")
			approved = code == 0
		}
		all = upstreamOf(oc.ToolNames())
	}
	// The tools cache is written right after the tools are installed.
	ws := "cc:" + e.WorkspaceID()
	for {
		out, errOut, code := e.Run("trust", "bind", ws, "inner__read_file", "inner__list_dir")
		if code == 0 {
			if !strings.Contains(out, "inner__read_file to "+ws+": connected") {
				t.Errorf("bind: %s", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("trust bind: exit %d: %s", code, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}

	cc := e.socketAs(t, "cc")
	cc.Initialize("cc-client")
	if got := upstreamOf(cc.ToolNames()); !slices.Equal(got, []string{"inner__list_dir", "inner__read_file"}) {
		t.Errorf("cc (bound) lists %v, want only its two bound upstream tools", got)
	}
	if names := cc.ToolNames(); !slices.Contains(names, "bash") {
		t.Errorf("cc lost its own level's built-in tools: %v", names)
	}
	if got := upstreamOf(oc.ToolNames()); !slices.Equal(got, all) {
		t.Errorf("oc (no binding) lists %v, want all %v", got, all)
	}
	r := cc.CallTool("inner__bash", map[string]any{"command": "true"})
	if code, _, data := r.Err(); code != -32003 || data["reason"] != "tool_not_bound" {
		t.Errorf("cc calling an unbound upstream tool: %s", r)
	}
	if r := cc.CallTool("inner__list_dir", map[string]any{"path": "."}); !r.ToolOK() {
		t.Errorf("cc calling a bound upstream tool: %s", r)
	}
	if r := oc.CallTool("inner__bash", map[string]any{"command": "true"}); r.Error != nil {
		t.Errorf("oc calling inner__bash: %s", r)
	}
}
