package chain

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	c.Egress = memEgress{"https://fs.example:443": true}
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
		{"remote, origin allowlisted", tools.RemoteOrigin("https://FS.example./mcp"), "", ""},
		{"remote, another port", tools.RemoteOrigin("https://fs.example:8443/mcp"), "origin_not_allowlisted",
			"upstream server fs is remote and its origin https://fs.example:8443 is not on the egress allowlist"},
		{"remote, another scheme", tools.RemoteOrigin("http://fs.example:443/mcp"), "origin_not_allowlisted",
			"upstream server fs is remote and its origin http://fs.example:443"},
		{"remote, a longer name", tools.RemoteOrigin("https://fs.example.evil.test/mcp"), "origin_not_allowlisted",
			"upstream server fs is remote and its origin https://fs.example.evil.test:443"},
		{"remote, legacy IPv4 form", tools.RemoteOrigin("http://0x7f.1/mcp"), "remote_origin_invalid",
			"upstream server fs has a URL clawd will not connect to"},
		{"remote without even a URL", tools.Origin{Kind: tools.OriginRemote}, "remote_origin_invalid", "upstream server fs has a URL"},
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
			if r, _ := audit.Last(); r.Step != StepSupply || r.Result != ResultDeny || r.Reason != tc.reason {
				t.Errorf("audit row = %+v", r)
			}
			if c.Visible(caller("cc:ws"), e) || c.Active(e) {
				t.Error("a refused provider's tool is listed or counted active")
			}
		})
	}
	// The remote refusal carries the exact line that allows the origin.
	e := tools.Entry{Provider: &tools.StaticProvider{Name: "fs", Source: tools.RemoteOrigin("https://fs.example:8443/mcp")}, Tool: up}
	d := c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "fs__read", Entry: e})
	if h, _ := d.Err.Data.(map[string]any)["hint"].(string); h != "if you trust this server: clawd egress allow https://fs.example:8443" {
		t.Errorf("remote refusal hint = %q", h)
	}
	// The audit row of an upstream tool names its server; a built-in
	// tool's names none.
	if r, _ := audit.Last(); r.Server != "fs" {
		t.Errorf("upstream call's audit row has server %q, want fs", r.Server)
	}
	bi := tools.Entry{Provider: &tools.StaticProvider{Name: "clawd", Source: tools.BuiltinOrigin()}, Tool: &testTool{tools.Spec{Name: "read_file", Permission: tools.PermRead}}}
	c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "read_file", Entry: bi})
	if r, _ := audit.Last(); r.Server != "" {
		t.Errorf("built-in call's audit row has server %q", r.Server)
	}
	// A URL clawd will not connect to is refused without its path, query
	// or password reaching the caller: they may hold the server's key.
	for _, raw := range []string{"https://exa mple.com/mcp?k=hunter2", "ftp://u:hunter2@fs.example/hunter2?k=hunter2"} {
		e = tools.Entry{Provider: &tools.StaticProvider{Name: "fs", Source: tools.RemoteOrigin(raw)}, Tool: up}
		d = c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "fs__read", Entry: e})
		if d.Allowed() || d.Reason != "remote_origin_invalid" {
			t.Fatalf("%s: %+v", raw, d)
		}
		if b, _ := json.Marshal(d.Err); strings.Contains(string(b), "hunter2") {
			t.Errorf("%s: the refusal shows a secret of the URL: %s", raw, b)
		}
	}
	// Without an egress allowlist every remote tool is refused.
	c.Egress = nil
	e = tools.Entry{Provider: &tools.StaticProvider{Name: "fs", Source: tools.RemoteOrigin("https://fs.example/mcp")}, Tool: up}
	if d := c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "fs__read", Entry: e}); d.Allowed() {
		t.Error("a remote tool was allowed without an egress allowlist")
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

// pinnedTool is an upstream tool whose definition may be unapproved.
type pinnedTool struct {
	testTool
	changed, unapproved bool
}

func (p *pinnedTool) DefinitionUnapproved() (string, bool, bool) {
	return "fs", p.changed, p.unapproved
}

// TestSupplyRefusesUnapprovedDefinitions: a tool whose definition is new
// or changed is refused at the supply-chain step (-32004, audited with the
// reason) and hidden from tools/list, even from an allowlisted binary;
// once approved it passes.
func TestSupplyRefusesUnapprovedDefinitions(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fs-server")
	writeExe(t, bin, "echo v1")
	c, audit := newTestChain(t, Options{})
	sum, _ := c.hashes.Sum(bin)
	c.Allow = memAllow{"fs " + sum: true}
	for _, tc := range []struct {
		changed, unapproved bool
		reason, msg         string
	}{
		{false, true, "definition_unapproved", "the definition of fs__read (upstream server fs) has not been approved"},
		{true, true, "definition_changed", "the definition of fs__read (upstream server fs) changed since you approved it"},
		{true, false, "", ""},
	} {
		tool := &pinnedTool{testTool{tools.Spec{Name: "fs__read", Permission: tools.PermUpstream}}, tc.changed, tc.unapproved}
		e := tools.Entry{Provider: &tools.StaticProvider{Name: "fs", Source: tools.LocalOrigin(bin)}, Tool: tool}
		d := c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "fs__read", Entry: e})
		if tc.reason == "" {
			if !d.Allowed() || !c.Visible(caller("cc:ws"), e) {
				t.Fatalf("an approved definition was refused: %+v", d.Err)
			}
			continue
		}
		if d.Allowed() || d.Err.Code != CodeSupplyChainDenied || d.Reason != tc.reason || !strings.Contains(d.Err.Message, tc.msg) {
			t.Fatalf("decision %+v, want -32004 %s %q", d.Err, tc.reason, tc.msg)
		}
		if h, _ := d.Err.Data.(map[string]any)["hint"].(string); !strings.Contains(h, "clawd mcp diff fs") || !strings.Contains(h, "clawd mcp approve fs fs__read") {
			t.Errorf("hint %q", h)
		}
		if r, _ := audit.Last(); r.Result != ResultDeny || r.Reason != tc.reason {
			t.Errorf("audit row %+v", r)
		}
		if c.Visible(caller("cc:ws"), e) || c.Active(e) {
			t.Error("an unapproved tool is listed")
		}
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

// TestSupplyFreshFor: with Chain.SupplyFreshFor set, the per-call check
// reuses its look at the executable and script for that long, and no
// longer: a rewritten script refuses the calls decided after the window.
// A look that failed is never reused.
func TestSupplyFreshFor(t *testing.T) {
	dir := t.TempDir()
	bin, script := filepath.Join(dir, "node"), filepath.Join(dir, "srv.js")
	writeExe(t, bin, "echo node")
	c, _ := newTestChain(t, Options{})
	binSum, _ := c.hashes.Sum(bin)
	writeExe(t, script, "echo v1")
	scriptSum, _ := c.hashes.Sum(script)
	os.Remove(script)
	c.Allow = scriptAllow{memAllow{"js " + binSum: true}, map[string]bool{"js " + scriptSum: true}}
	origin := tools.LocalOrigin(bin)
	origin.Script = script
	e := tools.Entry{Provider: &tools.StaticProvider{Name: "js", Source: origin},
		Tool: &testTool{tools.Spec{Name: "js__hello", Permission: tools.PermUpstream}}}
	authorize := func() *Decision {
		return c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "js__hello", Entry: e})
	}

	c.SupplyFreshFor = time.Hour
	if d := authorize(); d.Allowed() || d.Reason != "script_unreadable" {
		t.Fatalf("missing script: %+v", d)
	}
	writeExe(t, script, "echo v1")
	if d := authorize(); !d.Allowed() {
		t.Fatalf("the failed look was reused: the approved script, now there, is refused: %+v", d.Err)
	}
	writeExe(t, script, "echo v2")
	if d := authorize(); !d.Allowed() {
		t.Fatalf("within the window the look was not reused: %+v", d.Err)
	}

	const window = 30 * time.Millisecond
	c.SupplyFreshFor = window
	time.Sleep(window + 10*time.Millisecond)
	if d := authorize(); d.Allowed() || d.Reason != "script_not_allowlisted" {
		t.Fatalf("a script rewritten before the window began was not refused after it: %+v", d)
	}
	c.SupplyFreshFor = 0
	writeExe(t, script, "echo v1")
	if d := authorize(); !d.Allowed() {
		t.Fatalf("without a window the restored script is refused: %+v", d.Err)
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

// TestVisibleOfAgreesWithVisible: the list-wide check (tools/list), which
// checks each provider's origin once, shows exactly the tools Visible shows
// one by one and exactly those a call may run (the chain's decision), for callers of several levels, over providers of every
// origin (two tools each), a tool switched off in config and tools whose
// definitions are not approved.
func TestVisibleOfAgreesWithVisible(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fs-server")
	writeExe(t, bin, "echo v1")
	c, _ := newTestChain(t, Options{DisabledTools: map[string]bool{"ok__off": true}},
		TrustEntry{Entity: "cc:*", Level: 3}, TrustEntry{Entity: "oc:*", Level: 1},
		TrustEntry{Entity: "local:*", Level: 3, Perms: map[string]string{"ok__b": PermDeny}})
	sum, _ := c.hashes.Sum(bin)
	c.Allow = memAllow{"ok " + sum: true}
	c.Egress = memEgress{"https://fs.example:443": true}
	var all []tools.Entry
	add := func(server string, origin tools.Origin, names ...string) {
		p := &tools.StaticProvider{Name: server, Source: origin}
		for _, n := range names {
			all = append(all, tools.Entry{Provider: p, Tool: &testTool{tools.Spec{Name: n, Permission: tools.PermUpstream}}})
		}
	}
	add("clawd", tools.BuiltinOrigin(), "read_file")
	all[0].Tool = &testTool{tools.Spec{Name: "read_file", Permission: tools.PermRead}}
	add("ok", tools.LocalOrigin(bin), "ok__a", "ok__b", "ok__off")
	add("gone", tools.LocalOrigin(bin+".missing"), "gone__a", "gone__b")
	add("web", tools.RemoteOrigin("https://fs.example/mcp"), "web__a", "web__b")
	add("evil", tools.RemoteOrigin("https://evil.example/mcp"), "evil__a")
	add("zero", tools.Origin{}, "zero__a")
	p := all[1].Provider
	all = append(all,
		tools.Entry{Provider: p, Tool: &pinnedTool{testTool{tools.Spec{Name: "ok__new", Permission: tools.PermUpstream}}, false, true}},
		tools.Entry{Provider: p, Tool: &pinnedTool{testTool{tools.Spec{Name: "ok__fine", Permission: tools.PermUpstream}}, true, false}})
	for _, entity := range []string{"cc:ws", "oc:ws", "local:ws", "device:nobody"} {
		var want []string
		for _, e := range all {
			if c.Visible(caller(entity), e) {
				want = append(want, e.Tool.Spec().Name)
			}
		}
		var got []string
		for _, e := range c.VisibleOf(caller(entity), all) {
			got = append(got, e.Tool.Spec().Name)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: VisibleOf %v, Visible %v", entity, got, want)
		}
		// Visible is VisibleOf of one entry, so the comparison above
		// cannot catch a step the list leaves out: the list must show
		// exactly the tools a call would be allowed to run (decide).
		var callable []string
		for _, e := range all {
			name := e.Tool.Spec().Name
			if d := c.decide(context.Background(), &Call{Caller: caller(entity), ToolName: name, Entry: e}); d.Allowed() {
				callable = append(callable, name)
			}
		}
		if strings.Join(got, " ") != strings.Join(callable, " ") {
			t.Errorf("%s: VisibleOf %v, but calls are allowed to %v", entity, got, callable)
		}
		if entity == "cc:ws" && strings.Join(want, " ") != "read_file ok__a ok__b web__a web__b ok__fine" {
			t.Errorf("cc:ws sees %v; the case table no longer covers what it means to", want)
		}
	}
	// /health's count, which also checks each provider once, agrees with
	// Active tool by tool.
	reg := tools.NewRegistry()
	seen := map[tools.Provider]bool{}
	for _, e := range all {
		if !seen[e.Provider] {
			seen[e.Provider] = true
			var list []tools.Tool
			for _, f := range all {
				if f.Provider == e.Provider {
					list = append(list, f.Tool)
				}
			}
			reg.Add(&tools.StaticProvider{Name: e.Provider.ID(), Source: e.Provider.Origin(), List: list})
		}
	}
	if got, want := c.ActiveCount(reg), reg.Count(c.Active); got != want || want == 0 {
		t.Errorf("ActiveCount %d, counting Active tool by tool %d", got, want)
	}
}
