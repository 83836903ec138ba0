//go:build linux || darwin

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/internal/config"
)

// TestHomeWorkspaceProtectsState: `clawd serve --workspace $HOME` with the
// data directory, the config and the token inside it. The file tools refuse
// them with -32005 and a reason, the config stays as it was and is not
// reloaded, each refusal is a Deny row by the sandbox step with that
// reason, written before the tool would run (no outcome), and the startup
// warning is printed once. (internal/daemon's tests call the tools
// directly: the tools' own checks.)
func TestHomeWorkspaceProtectsState(t *testing.T) {
	e := newEnv(t)
	home := e.Home
	secretHex := strings.Repeat("5e", 32)
	secretFile := filepath.Join(home, ".local", "share", "clawde", "session.secret")
	cfgFile := filepath.Join(home, ".config", "clawde", "mcp-server.toml")
	tokFile := filepath.Join(home, ".claude", "hooks", ".clawde-token-"+config.WorkspaceID(home))
	cfg := "policy_stub_mode = false\n[tools]\nbash = false\n"
	for p, content := range map[string]string{secretFile: secretHex + "\n", cfgFile: cfg, tokFile: "TOKEN-" + strings.Repeat("7", 64) + "\n"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfgBefore, _ := os.Stat(cfgFile)

	r := e.Stdio("--workspace", home, "--client", "cc")
	r.Initialize("claude-code")

	refused := func(tool string, args map[string]any, reason string) {
		t.Helper()
		resp := r.CallTool(tool, args)
		if resp.Error == nil || resp.Error.Code != -32005 {
			t.Fatalf("%s %v: %s, want -32005", tool, args, resp.Raw)
		}
		if got, _ := resp.Error.Data["reason"].(string); !strings.Contains(got, reason) {
			t.Errorf("%s %v: reason %q, want it to say %q", tool, args, got, reason)
		}
		for _, leak := range []string{secretHex, "TOKEN-7777"} {
			if strings.Contains(resp.Raw, leak) {
				t.Errorf("%s %v leaked %s", tool, args, leak)
			}
		}
	}
	refused("read_file", map[string]any{"path": ".local/share/clawde/session.secret"}, "session.secret is the key that signs bearer tokens")
	refused("read_file", map[string]any{"path": secretFile}, "session.secret is the key that signs bearer tokens")
	refused("read_file", map[string]any{"path": ".claude/hooks/" + filepath.Base(tokFile)}, "bearer token")
	refused("write_file", map[string]any{"path": ".config/clawde/mcp-server.toml", "content": "policy_stub_mode = true\n"}, "hot-reloads")
	refused("search", map[string]any{"query": "5e5e", "path": ".local/share/clawde"}, "data directory")

	// Whole-workspace search finds nothing of the state.
	resp := r.CallTool("search", map[string]any{"query": "5e5e5e"})
	if resp.Result == nil || resp.Result.StructuredContent["total_matches"] != float64(0) {
		t.Errorf("search of the workspace: %s", resp.Raw)
	}

	// The config is unchanged (same content, same inode) and, after more
	// than one poll interval, was not reloaded.
	time.Sleep(1500 * time.Millisecond)
	if b, _ := os.ReadFile(cfgFile); string(b) != cfg {
		t.Errorf("config changed: %q", b)
	}
	if after, _ := os.Stat(cfgFile); !os.SameFile(cfgBefore, after) {
		t.Error("config file replaced")
	}
	r.CloseWait()
	log := r.Stderr.String()
	if strings.Contains(log, "config reloaded") {
		t.Errorf("config reloaded:\n%s", log)
	}
	if n := strings.Count(log, "the workspace contains clawd's own state"); n != 1 {
		t.Errorf("%d startup warnings, want 1:\n%s", n, log)
	}
	if !strings.Contains(log, "bash is not confined") {
		t.Errorf("the warning does not say bash is not confined:\n%s", log)
	}

	// The audit log has each refusal as a Deny by the sandbox step with
	// the reason.
	out, errOut, code := e.Run("audit", "--result", "Deny", "--json")
	if code != 0 {
		t.Fatalf("clawd audit: exit %d %s", code, errOut)
	}
	var rows []struct {
		ToolID, Result, Step, Reason string
		Outcome                      *string
	}
	if err := json.Unmarshal([]byte(out), &rows, json.RejectUnknownMembers(false), json.MatchCaseInsensitiveNames(true)); err != nil {
		t.Fatalf("audit json: %v\n%s", err, out)
	}
	found := map[string]bool{}
	for _, row := range rows {
		if row.Result == "Deny" && row.Step == "sandbox" && strings.HasPrefix(row.Reason, "protected: ") {
			found[row.ToolID] = true
			if row.Outcome != nil {
				// The chain's sandbox step refused it: the tool never ran.
				t.Errorf("%s refusal has outcome %q: refused by the tool, not before it", row.ToolID, *row.Outcome)
			}
			if strings.Contains(row.Reason, secretHex) {
				t.Error("the audit reason holds the secret")
			}
		}
	}
	for _, tool := range []string{"read_file", "write_file", "search"} {
		if !found[tool] {
			t.Errorf("no Deny/sandbox/protected audit row for %s in:\n%s", tool, out)
		}
	}
}
