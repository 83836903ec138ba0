package chain

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/tools"
)

// TestSupplyByOrigin: step 4 decides by the provider's Origin. Above all, a
// provider that names no binary is not built-in for that: a remote server
// (which has no path) and a provider that gives no origin are refused, and
// their handlers would never run. The refusal names the server and says
// what to do.
func TestSupplyByOrigin(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fs-server")
	writeExe(t, bin, "echo v1")
	c, audit := newTestChain(t, Options{})
	sum, err := c.hashes.Sum(bin)
	if err != nil {
		t.Fatal(err)
	}
	c.Allow = memAllow{"fs " + sum: true}
	up := &testTool{tools.Spec{Name: "fs__read", Permission: tools.PermUpstream}}
	for _, tc := range []struct {
		name   string
		origin tools.Origin
		reason string // "" = allowed
		msg    string // the message's start after "supply_chain_denied: "
	}{
		{"built-in", tools.BuiltinOrigin(), "", ""},
		{"local allowlisted", tools.LocalOrigin(bin), "", ""},
		{"local binary missing", tools.LocalOrigin(bin + ".other"), "binary_unreadable", "the binary of upstream server fs"},
		{"local without a path", tools.LocalOrigin(""), "no_binary_path", "upstream server fs is a local executable but names no path"},
		{"remote with an empty path", tools.RemoteOrigin("https://fs.example/mcp"), "remote_origin_unverified",
			"upstream server fs is remote (https://fs.example/mcp) and clawd cannot vet a remote server yet"},
		{"remote without even a URL", tools.Origin{Kind: tools.OriginRemote}, "remote_origin_unverified", "upstream server fs is remote"},
		{"zero origin", tools.Origin{}, "unknown_origin", "upstream server fs does not say where its tools run (origin unknown(0))"},
		{"out-of-range kind", tools.Origin{Kind: 99}, "unknown_origin", "upstream server fs does not say where its tools run (origin unknown(99))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &tools.StaticProvider{Name: "fs", Source: tc.origin}
			e := tools.Entry{Provider: p, Tool: up}
			d := c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "fs__read", Entry: e})
			if tc.reason == "" {
				if !d.Allowed() || !c.Visible(caller("cc:ws"), e) || !c.Active(e) {
					t.Fatalf("refused: %+v", d.Err)
				}
				return
			}
			if d.Allowed() {
				t.Fatal("allowed")
			}
			if d.Err.Code != CodeSupplyChainDenied || d.Step != StepSupply || d.Reason != tc.reason ||
				!strings.HasPrefix(d.Err.Message, "supply_chain_denied: "+tc.msg) {
				t.Errorf("refusal %d %s %s %q; want -32004 at supply_chain, %s, %q", d.Err.Code, d.Step, d.Reason, d.Err.Message, tc.reason, tc.msg)
			}
			if data := d.Err.Data.(map[string]any); data["server"] != "fs" || data["reason"] != tc.reason {
				t.Errorf("data = %v", data)
			}
			if r := audit.rows[len(audit.rows)-1]; r.Step != StepSupply || r.Result != ResultDeny || r.Reason != tc.reason {
				t.Errorf("audit row = %+v", r)
			}
			if c.Visible(caller("cc:ws"), e) || c.Active(e) {
				t.Error("a refused provider's tool is listed or counted active")
			}
		})
	}
	// The remote refusal carries a hint the agent can act on.
	e := tools.Entry{Provider: &tools.StaticProvider{Name: "fs", Source: tools.RemoteOrigin("https://fs.example/mcp")}, Tool: up}
	d := c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "fs__read", Entry: e})
	if h, _ := d.Err.Data.(map[string]any)["hint"].(string); !strings.Contains(h, "clawd mcp allow --server fs") {
		t.Errorf("remote refusal hint = %q", h)
	}
}

// TestActive: health's active tools are the chain's: a tool switched off in
// [tools] or refused by the supply-chain step is not active. For built-in
// tools Active allocates nothing (GET /health asks on every request).
func TestActive(t *testing.T) {
	c, _ := newTestChain(t, Options{DisabledTools: map[string]bool{"bash": true}})
	bi := &tools.StaticProvider{Name: "clawd", Source: tools.BuiltinOrigin()}
	rd := tools.Entry{Provider: bi, Tool: &testTool{tools.Spec{Name: "read_file"}}}
	if !c.Active(rd) {
		t.Error("an enabled built-in tool is not active")
	}
	if c.Active(tools.Entry{Provider: bi, Tool: &testTool{tools.Spec{Name: "bash"}}}) {
		t.Error("a tool switched off in config is active")
	}
	if c.Active(tools.Entry{Provider: bi}) || c.Active(tools.Entry{Tool: rd.Tool}) {
		t.Error("an entry without a tool or provider is active")
	}
	if n := testing.AllocsPerRun(100, func() { c.Active(rd) }); n != 0 {
		t.Errorf("Active allocates %.0f times for a built-in tool, want 0", n)
	}
}

// scriptAllow is an allowlist that also vouches for scripts.
type scriptAllow struct {
	memAllow
	scripts map[string]bool
}

func (s scriptAllow) ScriptAllowed(server, sum string) (bool, error) {
	return s.scripts[server+" "+sum], nil
}

// TestSupplyScript: a local provider that runs a script (node x.js) needs
// its executable and its script approved, checked on every call against
// the files as they are now; an allowlist that cannot vouch for scripts
// refuses it.
func TestSupplyScript(t *testing.T) {
	dir := t.TempDir()
	bin, script := filepath.Join(dir, "node"), filepath.Join(dir, "srv.js")
	writeExe(t, bin, "echo node")
	writeExe(t, script, "echo v1")
	c, _ := newTestChain(t, Options{})
	binSum, _ := c.hashes.Sum(bin)
	scriptSum, _ := c.hashes.Sum(script)
	up := &testTool{tools.Spec{Name: "js__hello", Permission: tools.PermUpstream}}
	origin := tools.LocalOrigin(bin)
	origin.Script = script
	e := tools.Entry{Provider: &tools.StaticProvider{Name: "js", Source: origin}, Tool: up}
	authorize := func() *Decision {
		return c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "js__hello", Entry: e})
	}

	c.Allow = memAllow{"js " + binSum: true} // no script support: refused
	if d := authorize(); d.Allowed() || d.Reason != "script_not_allowlisted" {
		t.Fatalf("an allowlist without script pins: %+v", d)
	}
	c.Allow = scriptAllow{memAllow{"js " + binSum: true}, map[string]bool{"js " + scriptSum: true}}
	if d := authorize(); !d.Allowed() {
		t.Fatalf("approved executable and script refused: %+v", d.Err)
	}
	// The script is rewritten: the next call is refused, naming it.
	writeExe(t, script, "echo v2")
	d := authorize()
	if d.Allowed() || d.Reason != "script_not_allowlisted" || !strings.Contains(d.Err.Message, "the script upstream server js runs ("+script) {
		t.Fatalf("changed script: %+v", d)
	}
	os.Remove(script)
	if d := authorize(); d.Allowed() || d.Reason != "script_unreadable" {
		t.Fatalf("missing script: %+v", d)
	}
}

// SumFile hashes the open descriptor, not whatever the name names now, and
// leaves the offset alone (the descriptor is executed afterwards).
func TestHashCacheSumFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bin")
	writeExe(t, path, "echo approved")
	var h HashCache
	want, _ := h.Sum(path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	writeExe(t, path+".new", "echo swapped")
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	got, err := h.SumFile(f)
	if err != nil || got != want {
		t.Fatalf("SumFile = %s, %v; want the opened file's %s", got, err, want)
	}
	if now, _ := h.Sum(path); now == want {
		t.Fatal("the swap did not change the file at the path")
	}
	if off, _ := f.Seek(0, 1); off != 0 {
		t.Errorf("offset moved to %d", off)
	}
}
