package clients

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestTypeScriptSDKv2 drives clawd with the official TypeScript SDK v2
// client (@modelcontextprotocol/client, from the same npm cache as the
// CLIs) over stdio, the unix socket (through `clawd connect`) and HTTP, in
// the SDK's three negotiation modes: its default "legacy" (initialize),
// "auto" (probe server/discover, fall back on a non-modern answer) and
// pinned to 2026-07-28 (modern or a loud failure). Each run must end on
// the era the mode asks for, list the tools, read a file and, over HTTP,
// hold a session id exactly when the era is legacy.
func TestTypeScriptSDKv2(t *testing.T) {
	pkg := filepath.Join(npmDir(), "node_modules", "@modelcontextprotocol", "client")
	if _, err := os.Stat(filepath.Join(pkg, "dist", "index.mjs")); err != nil {
		t.Skipf("the TypeScript SDK v2 client is not installed (%v); install with: npm install --prefix %s %s", err, npmDir(), npmPackages)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "tsv2_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}

	e := clawdtest.NewEnv(t, clawdBin)
	e.Write("a.txt", "hello\n")
	e.Daemon("unix_socket")
	_, st := e.Daemon("tcp_loopback", "--port", "0")
	childEnv := map[string]string{}
	for _, kv := range e.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		childEnv[k] = v
	}
	kinds := map[string]map[string]any{
		"stdio": {"command": clawdBin, "args": []string{"serve"}, "cwd": e.WS, "env": childEnv},
		"unix":  {"command": clawdBin, "args": []string{"connect"}, "cwd": e.WS, "env": childEnv},
		"http":  {"url": "http://" + st.Addr + "/mcp", "token": clawdtest.ReadToken(t, st.TokenFile)},
	}
	modes := []struct{ mode, version, era string }{
		{"legacy", "2025-11-25", "legacy"},
		{"auto", "2026-07-28", "modern"},
		{"2026-07-28", "2026-07-28", "modern"},
	}
	for _, kind := range []string{"stdio", "unix", "http"} {
		for _, m := range modes {
			t.Run(kind+"/"+m.mode, func(t *testing.T) {
				args := map[string]any{"pkg": pkg, "mode": m.mode}
				for k, v := range kinds[kind] {
					args[k] = v
				}
				b, _ := json.Marshal(args)
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, node, script)
				cmd.Env = append(os.Environ(), "TSV2_ARGS="+string(b))
				out, err := cmd.Output()
				if err != nil {
					var stderr string
					if ee, ok := err.(*exec.ExitError); ok {
						stderr = string(ee.Stderr)
					}
					t.Fatalf("TypeScript SDK v2 client (%s): %v\n%s", m.mode, err, stderr)
				}
				var got struct {
					Version, Era string
					Tools        []string
					Read         *string
					SessionID    *string
				}
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("client output %q: %v", out, err)
				}
				if got.Version != m.version || got.Era != m.era {
					t.Errorf("negotiated %s (%s), want %s (%s)", got.Version, got.Era, m.version, m.era)
				}
				if !slices.Contains(got.Tools, "read_file") || got.Read == nil || *got.Read != "hello\n" {
					t.Errorf("tools %v, read_file %v", got.Tools, got.Read)
				}
				if kind == "http" && (got.SessionID != nil) != (m.era == "legacy") {
					t.Errorf("HTTP session id %v under the %s era", got.SessionID, m.era)
				}
			})
		}
	}
}
