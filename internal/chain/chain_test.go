package chain

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/support/netguard"
	"github.com/clawde/clawd/internal/tools"
)

// testTool is a tool with a given spec whose handler does nothing; the
// chain decides before any handler runs.
type testTool struct{ spec tools.Spec }

func (t *testTool) Spec() *tools.Spec { return &t.spec }
func (t *testTool) Call(context.Context, jsontext.Value) (any, error) {
	return map[string]bool{"ok": true}, nil
}

// specTools are the five built-in tools' names, hints and path arguments,
// plus an upstream tool.
var specTools = map[string]*testTool{
	"read_file":   {tools.Spec{Name: "read_file", Permission: tools.PermRead, PathArgs: []string{"path"}}},
	"list_dir":    {tools.Spec{Name: "list_dir", Permission: tools.PermRead, PathArgs: []string{"path"}}},
	"search":      {tools.Spec{Name: "search", Permission: tools.PermRead, PathArgs: []string{"path"}}},
	"write_file":  {tools.Spec{Name: "write_file", Permission: tools.PermWrite, PathArgs: []string{"path"}}},
	"bash":        {tools.Spec{Name: "bash", Permission: tools.PermExecute, PathArgs: []string{"working_dir"}}},
	"srv__fetch":  {tools.Spec{Name: "srv__fetch", Permission: tools.PermUpstream}},
	"odd_hint":    {tools.Spec{Name: "odd_hint", Permission: "admin"}},
	"empty_hint":  {tools.Spec{Name: "empty_hint"}},
	"no_pathargs": {tools.Spec{Name: "no_pathargs", Permission: tools.PermRead}},
}

var builtin = &tools.StaticProvider{Name: "clawd", Source: tools.BuiltinOrigin()}

// memAudit is MemoryAudit that can be told to fail: with fail set, Record
// returns it, as a SQLite audit log does when its disk is full.
type memAudit struct {
	MemoryAudit
	fail error
}

func (m *memAudit) Record(r *AuditRecord) (int64, error) {
	if m.fail != nil {
		return 0, m.fail
	}
	return m.MemoryAudit.Record(r)
}

type memAllow map[string]bool

func (m memAllow) ServerAllowed(server, sum string) (bool, error) { return m[server+" "+sum], nil }

// memEgress is an egress allowlist by origin string.
type memEgress map[string]bool

func (m memEgress) EgressAllowed(o netguard.Origin) (bool, error) { return m[o.String()], nil }

func newWorkspace(t *testing.T) *sandbox.Workspace {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink(t.TempDir(), filepath.Join(dir, "out"))
	os.Symlink("sub", filepath.Join(dir, "in"))
	ws, err := sandbox.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func newTestChain(t *testing.T, opts Options, rows ...TrustEntry) (*Chain, *memAudit) {
	if rows == nil {
		rows = DefaultTrustRows()
	}
	a := &memAudit{}
	return &Chain{
		WS:      newWorkspace(t),
		Trust:   NewMemoryTrust(rows...),
		Audit:   a,
		Allow:   memAllow{},
		Options: func() Options { return opts },
	}, a
}

func caller(entity string) *Caller {
	kind, sub, _ := strings.Cut(entity, ":")
	c := &Caller{Transport: "stdio", AuthMethod: "spawn", Kind: kind, Subject: sub}
	c.Resolve("")
	return c
}

func call(c *Caller, tool, args string) *Call {
	cl := &Call{Caller: c, ToolName: tool, RequestID: "7"}
	if t, ok := specTools[tool]; ok {
		cl.Entry = tools.Entry{Provider: builtin, Tool: t}
	}
	if args != "" {
		cl.Args = jsontext.Value(args)
	}
	return cl
}

// TestStepsDenyPaths drives every step's refusal and the allow path through
// Authorize, checking the code, message, data and the one audit row.
func TestStepsDenyPaths(t *testing.T) {
	rows := append(DefaultTrustRows(),
		TrustEntry{Entity: "device:phone", Level: 1},
		TrustEntry{Entity: "cc:locked", Level: 3, Perms: map[string]string{"read_file": "deny"}},
	)
	tests := []struct {
		name   string
		call   *Call
		code   int      // 0 = allowed
		msg    string   // the error message's start: the code name and a colon
		says   []string // what else the message must say (the reason, for an agent to act on)
		step   string
		reason string
		data   map[string]any // members that must be present in Err.Data
		audit  bool
	}{
		{"no auth", call(&Caller{Transport: "http", Subject: "ws"}, "read_file", `{"path":"a.txt"}`),
			CodeUnauthorized, "unauthorized: ", []string{"did not authenticate", "bearer token"}, StepAuth, "not_authenticated", nil, false},
		{"unknown entity", call(caller("device:other"), "read_file", `{"path":"a.txt"}`),
			CodeUnknownEntity, "unknown_entity: ", []string{"device:other has no trust registry row", "`clawd trust set device:other LEVEL`"}, StepTrust, "no_trust_registry_row",
			map[string]any{"entity": "device:other", "hint": "clawd trust set device:other LEVEL"}, true},
		{"unknown tool", call(caller("local:ws"), "nope", `{}`),
			jsonrpc.CodeInvalidParams, "unknown tool: nope", nil, StepLookup, "unknown_tool", nil, true},
		{"level too low", call(caller("device:phone"), "bash", `{"command":"id"}`),
			CodePolicyDenied, "policy_denied: ", []string{"bash needs level 2", "device:phone is level 1", "`clawd trust set device:phone 2`"}, StepPolicy, ReasonLevelTooLow, map[string]any{"reason": ReasonLevelTooLow}, true},
		{"explicit deny", call(caller("cc:locked"), "read_file", `{"path":"a.txt"}`),
			CodePolicyDenied, "policy_denied: ", []string{"read_file is denied to cc:locked by the trust registry row cc:locked", "`clawd trust set cc:locked 3 --allow read_file`"}, StepPolicy, ReasonExplicitDeny, map[string]any{"reason": ReasonExplicitDeny}, true},
		{"traversal", call(caller("local:ws"), "read_file", `{"path":"../etc/passwd"}`),
			CodeSandboxViolation, "sandbox_violation: ", []string{`"../etc/passwd": relative path leaves the workspace root`}, StepSandbox, "relative path leaves the workspace root", map[string]any{"path": "../etc/passwd"}, true},
		{"absolute outside", call(caller("local:ws"), "write_file", `{"path":"/etc/passwd","content":""}`),
			CodeSandboxViolation, "sandbox_violation: ", []string{`"/etc/passwd": absolute path outside the workspace root`}, StepSandbox, "", map[string]any{"path": "/etc/passwd"}, true},
		{"symlink escape", call(caller("local:ws"), "list_dir", `{"path":"out/x"}`),
			CodeSandboxViolation, "sandbox_violation: ", []string{`"out/x": `, "outside the workspace"}, StepSandbox, "", map[string]any{"path": "out/x"}, true},
		{"bash working_dir", call(caller("cc:ws"), "bash", `{"command":"ls","working_dir":"../.."}`),
			CodeSandboxViolation, "sandbox_violation: ", []string{`"../..": `}, StepSandbox, "", map[string]any{"path": "../.."}, true},
		{"allowed read", call(caller("device:phone"), "read_file", `{"path":"a.txt"}`),
			0, "", nil, StepHandler, ReasonLevelAllow, nil, true},
		{"allowed in-root symlink", call(caller("local:ws"), "list_dir", `{"path":"in"}`),
			0, "", nil, StepHandler, ReasonLevelAllow, nil, true},
		{"allowed bash at level 2", call(caller("local:ws"), "bash", `{"command":"true"}`),
			0, "", nil, StepHandler, ReasonLevelAllow, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, audit := newTestChain(t, Options{}, rows...)
			d := c.Authorize(context.Background(), tt.call)
			if tt.code == 0 {
				if !d.Allowed() {
					t.Fatalf("denied: %+v", d.Err)
				}
			} else {
				if d.Allowed() || d.Err.Code != tt.code || !strings.HasPrefix(d.Err.Message, tt.msg) {
					t.Fatalf("Err = %+v, want %d %q...", d.Err, tt.code, tt.msg)
				}
				for _, w := range tt.says {
					if !strings.Contains(d.Err.Message, w) {
						t.Errorf("message %q does not say %q", d.Err.Message, w)
					}
				}
				data, _ := d.Err.Data.(map[string]any)
				for k, v := range tt.data {
					if data[k] != v {
						t.Errorf("data[%s] = %v, want %v (data %v)", k, data[k], v, data)
					}
				}
			}
			if d.Step != tt.step || (tt.reason != "" && d.Reason != tt.reason) {
				t.Errorf("step, reason = %s, %s; want %s, %s", d.Step, d.Reason, tt.step, tt.reason)
			}
			if !tt.audit {
				if len(audit.Rows()) != 0 || d.AuditID != 0 {
					t.Errorf("auth failure wrote %d audit rows", len(audit.Rows()))
				}
				return
			}
			if len(audit.Rows()) != 1 || d.AuditID != 1 {
				t.Fatalf("%d audit rows (AuditID %d), want 1", len(audit.Rows()), d.AuditID)
			}
			r := audit.Rows()[0]
			wantResult := ResultAllow
			if tt.code != 0 {
				wantResult = ResultDeny
			}
			if r.Result != wantResult || r.Step != tt.step || r.Reason != d.Reason || r.ToolID != tt.call.ToolName ||
				r.EntityID != tt.call.Caller.EntityID || r.Transport != "stdio" || r.RequestID != "7" || r.Time.IsZero() {
				t.Errorf("audit row = %+v", r)
			}
			if tt.step == StepTrust && r.TrustLevel != NoTrustLevel {
				t.Errorf("unknown entity row has trust level %d", r.TrustLevel)
			}
		})
	}
}

// TestPolicyTable is the deny-by-default table: level x permission hint,
// explicit permissions both ways, the stub and disabled tools.
func TestPolicyTable(t *testing.T) {
	tools := []string{"read_file", "list_dir", "search", "write_file", "bash", "srv__fetch", "odd_hint", "empty_hint"}
	want := map[int]string{ // allowed tools by level
		0: "",
		1: "read_file list_dir search",
		2: "read_file list_dir search write_file bash",
		3: "read_file list_dir search write_file bash srv__fetch",
	}
	for level := 0; level <= 3; level++ {
		var got []string
		for _, name := range tools {
			if ok, _ := Policy(Options{}, TrustEntry{Level: level}, &specTools[name].spec); ok {
				got = append(got, name)
			}
		}
		if strings.Join(got, " ") != want[level] {
			t.Errorf("level %d allows %v, want %s", level, got, want[level])
		}
	}
	tests := []struct {
		name   string
		opts   Options
		e      TrustEntry
		tool   string
		allow  bool
		reason string
	}{
		{"explicit allow above level", Options{}, TrustEntry{Level: 1, Perms: map[string]string{"write_file": "allow"}}, "write_file", true, ReasonExplicitAllow},
		{"explicit allow at level 0", Options{}, TrustEntry{Level: 0, Perms: map[string]string{"read_file": "allow"}}, "read_file", true, ReasonExplicitAllow},
		{"explicit deny below level", Options{}, TrustEntry{Level: 3, Perms: map[string]string{"bash": "deny"}}, "bash", false, ReasonExplicitDeny},
		{"other tool unaffected", Options{}, TrustEntry{Level: 3, Perms: map[string]string{"bash": "deny"}}, "write_file", true, ReasonLevelAllow},
		{"unknown hint needs explicit allow", Options{}, TrustEntry{Level: 3}, "odd_hint", false, ReasonUnknownHint},
		{"stub allows level 0 bash", Options{PolicyStubMode: true}, TrustEntry{Level: 0}, "bash", true, ReasonStubAllow},
		{"stub ignores explicit deny", Options{PolicyStubMode: true}, TrustEntry{Level: 3, Perms: map[string]string{"bash": "deny"}}, "bash", true, ReasonStubAllow},
		{"disabled beats stub", Options{PolicyStubMode: true, DisabledTools: map[string]bool{"bash": true}}, TrustEntry{Level: 3}, "bash", false, ReasonToolDisabled},
		{"disabled beats explicit allow", Options{DisabledTools: map[string]bool{"bash": true}}, TrustEntry{Level: 3, Perms: map[string]string{"bash": "allow"}}, "bash", false, ReasonToolDisabled},
	}
	for _, tt := range tests {
		allow, reason := Policy(tt.opts, tt.e, &specTools[tt.tool].spec)
		if allow != tt.allow || reason != tt.reason {
			t.Errorf("%s: Policy = %v, %s; want %v, %s", tt.name, allow, reason, tt.allow, tt.reason)
		}
	}
}

// A deny written for another name of an upstream tool follows it: the
// plain name when the server's listing renamed the tool, and the hashed
// name it was offered under when the server undoes the rename (drops the
// tool that had taken the plain name). An allow does not (fails closed),
// and the refusal names the deny that applies.
func TestDenyByOtherName(t *testing.T) {
	for _, tt := range []struct {
		what   string
		spec   *tools.Spec
		denied string
	}{
		{"deny of the plain name, tool renamed",
			&tools.Spec{Name: "srv__fetch_1a2b3c4d", Permission: tools.PermUpstream, Server: "srv", Plain: "srv__fetch"}, "srv__fetch"},
		{"deny of the hashed name, tool back under its plain name",
			&tools.Spec{Name: "srv__fetch", Permission: tools.PermUpstream, Server: "srv", Plain: "srv__fetch", Hashed: "srv__fetch_1a2b3c4d"}, "srv__fetch_1a2b3c4d"},
	} {
		deny := TrustEntry{Entity: "cc:*", Level: 3, Perms: map[string]string{tt.denied: PermDeny}}
		if allow, reason := Evaluate(deny, tt.spec); allow || reason != ReasonExplicitDeny {
			t.Errorf("%s: %v, %s", tt.what, allow, reason)
		}
		if s := PolicySentence("cc:x", deny, tt.spec, ReasonExplicitDeny); !strings.Contains(s, "--deny "+tt.denied+")") {
			t.Errorf("%s: the refusal does not name the deny that applies: %s", tt.what, s)
		}
		allowRow := TrustEntry{Entity: "cc:*", Level: 1, Perms: map[string]string{tt.denied: PermAllow}}
		if allow, _ := Evaluate(allowRow, tt.spec); allow {
			t.Errorf("%s: an allow of that name followed the tool", tt.what)
		}
	}
}

// An upstream tool switched off in config ([tools] NAME = false, accepted
// while the server lists it) stays off when the server renames it, or
// undoes a rename: the switch names the tool, not whatever it is offered
// under now.
func TestDisabledFollowsARename(t *testing.T) {
	renamed := &tools.Spec{Name: "srv__fetch_1a2b3c4d", Permission: tools.PermUpstream, Server: "srv", Plain: "srv__fetch", Hashed: "srv__fetch_1a2b3c4d"}
	back := &tools.Spec{Name: "srv__fetch", Permission: tools.PermUpstream, Server: "srv", Plain: "srv__fetch", Hashed: "srv__fetch_1a2b3c4d"}
	row := TrustEntry{Entity: "cc:*", Level: 3}
	for _, tt := range []struct {
		off  string
		spec *tools.Spec
	}{{"srv__fetch", renamed}, {"srv__fetch_1a2b3c4d", back}} {
		opts := Options{DisabledTools: map[string]bool{tt.off: true}}
		if allow, reason := Policy(opts, row, tt.spec); allow || reason != ReasonToolDisabled {
			t.Errorf("[tools] %s = false, tool offered as %s: %v, %s", tt.off, tt.spec.Name, allow, reason)
		}
		c, _ := newTestChain(t, opts)
		e := tools.Entry{Provider: builtin, Tool: &testTool{spec: *tt.spec}}
		if c.Active(e) {
			t.Errorf("[tools] %s = false, tool offered as %s: counted active", tt.off, tt.spec.Name)
		}
	}
}

func TestVisible(t *testing.T) {
	rows := append(DefaultTrustRows(), TrustEntry{Entity: "device:phone", Level: 1, Perms: map[string]string{"search": "deny"}})
	c, audit := newTestChain(t, Options{DisabledTools: map[string]bool{"list_dir": true}}, rows...)
	visible := func(cl *Caller) string {
		var out []string
		for _, name := range []string{"read_file", "list_dir", "search", "write_file", "bash"} {
			if c.Visible(cl, tools.Entry{Provider: builtin, Tool: specTools[name]}) {
				out = append(out, name)
			}
		}
		return strings.Join(out, " ")
	}
	for _, tt := range []struct{ entity, want string }{
		{"device:phone", "read_file"},
		{"local:ws", "read_file search write_file bash"},
		{"device:unknown", ""},
	} {
		if got := visible(caller(tt.entity)); got != tt.want {
			t.Errorf("%s sees %q, want %q", tt.entity, got, tt.want)
		}
	}
	if got := visible(&Caller{Subject: "ws", EntityID: "local:ws"}); got != "" {
		t.Errorf("unauthenticated caller sees %q", got)
	}
	if len(audit.Rows()) != 0 {
		t.Errorf("tools/list visibility wrote %d audit rows", len(audit.Rows()))
	}
}

func writeExe(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+content+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Age the file past the racy window so its hash may be cached.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
}

func TestSupplyChain(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0 // ctime cannot be aged; see TestHashCacheRacyWindow
	bin := filepath.Join(t.TempDir(), "upstream-server")
	writeExe(t, bin, "echo v1")
	c, audit := newTestChain(t, Options{})
	ext := &tools.StaticProvider{Name: "fs-server", Source: tools.LocalOrigin(bin)}
	up := &testTool{tools.Spec{Name: "fs__read", Permission: tools.PermUpstream}}
	mk := func() *Call {
		return &Call{Caller: caller("cc:ws"), ToolName: "fs__read", Entry: tools.Entry{Provider: ext, Tool: up}}
	}
	sum1, err := c.hashes.Sum(bin)
	if err != nil {
		t.Fatal(err)
	}

	d := c.Authorize(context.Background(), mk())
	if d.Allowed() || d.Err.Code != CodeSupplyChainDenied || !strings.HasPrefix(d.Err.Message, "supply_chain_denied: ") ||
		!strings.Contains(d.Err.Message, "fs-server") || !strings.Contains(d.Err.Message, "clawd mcp allow --server fs-server --sha256 "+sum1) {
		t.Fatalf("not allowlisted: %+v", d.Err)
	}
	data := d.Err.Data.(map[string]any)
	if data["sha256"] != sum1 || data["server"] != "fs-server" || data["reason"] != "binary_not_allowlisted" ||
		!strings.Contains(data["hint"].(string), "clawd mcp allow --server fs-server --sha256 "+sum1) {
		t.Errorf("data = %v", data)
	}
	if r, _ := audit.Last(); r.Step != StepSupply || r.Result != ResultDeny || r.TrustLevel != 3 {
		t.Errorf("audit row = %+v", r)
	}
	if c.Visible(caller("cc:ws"), mk().Entry) {
		t.Error("a tool of a non-allowlisted server is listed")
	}

	c.Allow = memAllow{"fs-server " + sum1: true}
	if d := c.Authorize(context.Background(), mk()); !d.Allowed() {
		t.Fatalf("allowlisted binary refused: %+v", d.Err)
	}
	// Same hash, other server id: refused.
	other := &tools.StaticProvider{Name: "other", Source: tools.LocalOrigin(bin)}
	if d := c.Authorize(context.Background(), &Call{Caller: caller("cc:ws"), ToolName: "x", Entry: tools.Entry{Provider: other, Tool: up}}); d.Allowed() {
		t.Error("hash allowlisted for fs-server passed for server other")
	}
	hashed := c.hashes.Hashed()
	for i := 0; i < 50; i++ {
		c.Authorize(context.Background(), mk())
	}
	if n := c.hashes.Hashed(); n != hashed {
		t.Errorf("50 calls hashed the binary %d more times; want 0 (cached)", n-hashed)
	}

	// The binary is replaced (same size, same mtime): refused again.
	writeExe(t, bin, "echo v2")
	d = c.Authorize(context.Background(), mk())
	if d.Allowed() || d.Err.Data.(map[string]any)["sha256"] == sum1 {
		t.Fatalf("replaced binary: %+v", d.Err)
	}
	if c.hashes.Hashed() != hashed+1 {
		t.Errorf("replaced binary was not re-hashed exactly once (%d)", c.hashes.Hashed()-hashed)
	}

	// Gone: refused with binary_unreadable.
	os.Remove(bin)
	d = c.Authorize(context.Background(), mk())
	if d.Allowed() || d.Err.Code != CodeSupplyChainDenied || d.Err.Data.(map[string]any)["reason"] != "binary_unreadable" {
		t.Errorf("missing binary: %+v", d.Err)
	}
	// A nil allowlist refuses every external binary; built-ins pass.
	writeExe(t, bin, "echo v1")
	c.Allow = nil
	if d := c.Authorize(context.Background(), mk()); d.Allowed() {
		t.Error("nil allowlist allowed an external binary")
	}
	if d := c.Authorize(context.Background(), call(caller("cc:ws"), "read_file", `{"path":"a.txt"}`)); !d.Allowed() {
		t.Errorf("built-in tool refused: %+v", d.Err)
	}
}

// A file changed within the racy window is hashed on every call, so a
// same-size rewrite within one timestamp tick cannot reuse a stale hash.
func TestHashCacheRacyWindow(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "srv")
	os.WriteFile(bin, []byte("x"), 0o755) // fresh: ctime is now
	var h HashCache
	for i := 0; i < 3; i++ {
		if _, err := h.Sum(bin); err != nil {
			t.Fatal(err)
		}
	}
	if h.Hashed() != 3 {
		t.Errorf("fresh file hashed %d times in 3 calls, want 3", h.Hashed())
	}
	if _, err := h.Sum(t.TempDir()); err == nil {
		t.Error("a directory was hashed")
	}
}

// Callers missing the cache for one file at the same time share one read
// (N upstreams started as `node SCRIPT` would hash node N times).
func TestHashCacheSharesConcurrentReads(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "node")
	os.WriteFile(bin, []byte("a large interpreter"), 0o755)
	old := racyWindow
	racyWindow = 0
	defer func() { racyWindow = old }()
	entered, release := make(chan struct{}, 16), make(chan struct{})
	testHookRead = func(string) { entered <- struct{}{}; <-release }
	defer func() { testHookRead = nil }()

	var h HashCache
	sums := make(chan string, 8)
	sum := func() {
		s, err := h.Sum(bin)
		if err != nil {
			t.Error(err)
		}
		sums <- s
	}
	go sum()
	<-entered // the first read is in progress
	for i := 0; i < 7; i++ {
		go sum()
	}
	time.Sleep(100 * time.Millisecond) // let them find it (a latecomer finds the cache instead)
	close(release)
	want := ""
	for i := 0; i < 8; i++ {
		s := <-sums
		if want == "" {
			want = s
		}
		if s != want || len(s) != 64 {
			t.Fatalf("sums differ: %q and %q", s, want)
		}
	}
	if h.Hashed() != 1 {
		t.Errorf("8 concurrent callers read the file %d times, want 1", h.Hashed())
	}
}

func TestAuditFailureRefuses(t *testing.T) {
	c, audit := newTestChain(t, Options{})
	audit.fail = errors.New("disk full")
	d := c.Authorize(context.Background(), call(caller("local:ws"), "read_file", `{"path":"a.txt"}`))
	if d.Allowed() || d.Err.Code != jsonrpc.CodeInternalError || !strings.Contains(d.Err.Message, "audit log") {
		t.Fatalf("decision = %+v", d.Err)
	}
}

func TestTrustStoreErrorRefuses(t *testing.T) {
	c, audit := newTestChain(t, Options{})
	c.Trust = failingTrust{}
	d := c.Authorize(context.Background(), call(caller("local:ws"), "read_file", `{"path":"a.txt"}`))
	if d.Allowed() || d.Err.Code != jsonrpc.CodeInternalError || d.Step != StepTrust {
		t.Fatalf("decision = %+v", d)
	}
	if len(audit.Rows()) != 1 || audit.Rows()[0].Reason != "trust_registry_unavailable" {
		t.Errorf("audit = %+v", audit.Rows())
	}
}

type failingTrust struct{}

func (failingTrust) Lookup(string) (TrustEntry, bool, error) {
	return TrustEntry{}, false, errors.New("io")
}

func TestFinishAndLastEval(t *testing.T) {
	c, audit := newTestChain(t, Options{})
	if c.LastEval() != 0 {
		t.Fatal("LastEval before any call")
	}
	cl := call(caller("local:ws"), "read_file", `{"path":"a.txt"}`)
	d := c.Authorize(context.Background(), cl)
	if c.LastEval() <= 0 || c.LastEval() != d.Latency {
		t.Errorf("LastEval = %v, decision latency %v", c.LastEval(), d.Latency)
	}
	c.Finish(cl, d, Outcome{Result: OutcomeOK})
	if audit.Outcomes()[d.AuditID].Result != OutcomeOK {
		t.Errorf("outcomes = %v", audit.Outcomes())
	}
	denied := c.Authorize(context.Background(), call(caller("local:ws"), "read_file", `{"path":"../x"}`))
	c.Finish(cl, denied, Outcome{Result: OutcomeOK}) // not called by mcp for denials; harmless
	// An auth failure does not move LastEval (no policy evaluation ran).
	before := c.LastEval()
	time.Sleep(time.Millisecond)
	c.Authorize(context.Background(), call(&Caller{}, "read_file", `{}`))
	if c.LastEval() != before {
		t.Error("auth failure changed LastEval")
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	got := clip(long)
	if len(got) > maxAuditText+3 || !strings.HasSuffix(got, "...") || !strings.HasPrefix(long, strings.TrimSuffix(got, "...")) {
		t.Errorf("clip cut badly: %d bytes", len(got))
	}
	if clip("bash") != "bash" {
		t.Error("short text clipped")
	}
}

func TestValidateEntity(t *testing.T) {
	for _, ok := range []string{"cc:*", "oc:ws-1a2b", "local:x", "device:AbC_1.2-3"} {
		if err := ValidateEntity(ok); err != nil {
			t.Errorf("ValidateEntity(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "cc", "cc:", ":x", "xx:ws", "cc:*x", "cc:a/b", "cc:" + strings.Repeat("a", 129), "CC:ws"} {
		if err := ValidateEntity(bad); err == nil {
			t.Errorf("ValidateEntity(%q) accepted", bad)
		}
	}
}

// TestSumFileWithoutChangeTime: where a file's key has no inode change time
// (Windows), a same-size rewrite with its mtime set back keeps the key, so
// Sum (the per-call check) may answer from the cache, but SumFile (what a
// spawn executes) reads the file again and sees the new content.
func TestSumFileWithoutChangeTime(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0
	defer func(f func(os.FileInfo) fileID) { fileIDFor = f }(fileIDFor)
	fileIDFor = func(fi os.FileInfo) fileID {
		return fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: fi.ModTime().UnixNano()}
	}
	bin := filepath.Join(t.TempDir(), "server.exe")
	writeExe(t, bin, "echo v1")
	st, _ := os.Stat(bin)
	var h HashCache
	approved, err := h.Sum(bin)
	if err != nil {
		t.Fatal(err)
	}
	writeExe(t, bin, "echo v2") // same size
	os.Chtimes(bin, st.ModTime(), st.ModTime())
	if cached, _ := h.Sum(bin); cached != approved {
		t.Fatalf("setup: the per-call check re-read the file (%s); the key should not have changed", cached)
	}
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := h.SumFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if got == approved {
		t.Fatal("SumFile answered the approved hash for a replaced file without an inode change time")
	}
	if now, _ := h.Sum(bin); now != got {
		t.Errorf("after SumFile the per-call check still answers %s, want the fresh %s", now, got)
	}
}
