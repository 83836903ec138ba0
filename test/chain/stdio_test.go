package chain_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStepDenialsOverStdio: each refusal the clawd binary can produce over
// stdio, with the exact JSON-RPC error and exactly one audit row naming the
// deciding step. (-32001 cannot happen on stdio, whose caller is the host
// that spawned clawd, and -32004 needs an external provider: both are in
// inprocess_test.go and the chain's unit tests.)
func TestStepDenialsOverStdio(t *testing.T) {
	tests := []struct {
		name    string
		setup   [][]string // CLI commands run before serve
		tool    string
		args    map[string]any
		code    int
		message string         // the start of error.message: the code name and a colon
		says    []string       // what else error.message must say ("$ENTITY" = the caller's entity)
		data    map[string]any // required members of error.data ("$ENTITY" = the caller's entity)
		step    string
		reason  string
		level   any // the row's trust_level (nil = NULL)
	}{
		{name: "unknown entity", setup: [][]string{{"trust", "rm", "local:*"}},
			tool: "read_file", args: map[string]any{"path": "a.txt"},
			code: -32002, message: "unknown_entity: ", says: []string{"$ENTITY has no trust registry row", "`clawd trust set $ENTITY LEVEL`"},
			data: map[string]any{"entity": "$ENTITY", "hint": "clawd trust set $ENTITY LEVEL"},
			step: "trust", reason: "no_trust_registry_row", level: nil},
		{name: "policy: level 0", setup: [][]string{{"trust", "set", "local:*", "0"}},
			tool: "read_file", args: map[string]any{"path": "a.txt"},
			code: -32003, message: "policy_denied: ", data: map[string]any{"reason": "trust_level_too_low"},
			says: []string{"read_file needs level 1", "$ENTITY is level 0 through the row local:*", "`clawd trust set $ENTITY 1`"},
			step: "policy", reason: "trust_level_too_low", level: int64(0)},
		{name: "policy: explicit deny", setup: [][]string{{"trust", "set", "local:*", "3", "--deny", "read_file"}},
			tool: "read_file", args: map[string]any{"path": "a.txt"},
			code: -32003, message: "policy_denied: ", data: map[string]any{"reason": "explicit_tool_deny"},
			says: []string{"read_file is denied to $ENTITY", "`clawd trust set $ENTITY 3 --allow read_file`"},
			step: "policy", reason: "explicit_tool_deny", level: int64(3)},
		{name: "sandbox: traversal",
			tool: "read_file", args: map[string]any{"path": "../outside/secret"},
			code: -32005, message: "sandbox_violation: ", data: map[string]any{"path": "../outside/secret"},
			says: []string{`"../outside/secret": relative path leaves the workspace root`},
			step: "sandbox", level: int64(2)},
		{name: "sandbox: symlink escape",
			tool: "read_file", args: map[string]any{"path": "out/secret"},
			code: -32005, message: "sandbox_violation: ", data: map[string]any{"path": "out/secret"},
			says: []string{`"out/secret": `, "outside the workspace"},
			step: "sandbox", level: int64(2)},
		{name: "unknown tool",
			tool: "no_such_tool", args: map[string]any{},
			code: -32602, message: "unknown tool: no_such_tool",
			step: "lookup", reason: "unknown_tool", level: int64(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for _, args := range tt.setup {
				e.MustRun(args...)
			}
			p := e.Stdio()
			p.Initialize("test-client")
			entity := "local:" + e.wsID
			r := p.CallTool(tt.tool, tt.args)
			code, msg, data := r.Err()
			if code != tt.code || !strings.HasPrefix(msg, tt.message) {
				t.Fatalf("response %v; want error %d %q...", r, tt.code, tt.message)
			}
			for _, w := range tt.says {
				if w = strings.ReplaceAll(w, "$ENTITY", entity); !strings.Contains(msg, w) {
					t.Errorf("error.message %q does not say %q", msg, w)
				}
			}
			for k, v := range tt.data {
				if s, ok := v.(string); ok {
					v = strings.ReplaceAll(s, "$ENTITY", entity)
				}
				if data[k] != v {
					t.Errorf("error.data.%s = %v, want %v", k, data[k], v)
				}
			}
			if tt.tool == "read_file" {
				if _, err := os.Stat(filepath.Join(e.outside, "secret")); err != nil {
					t.Fatal(err)
				}
			}
			p.CloseWait()
			rows := e.auditRows(t, p.Cmd.Process.Pid)
			if len(rows) != 1 {
				t.Fatalf("%d audit rows, want 1: %+v", len(rows), rows)
			}
			row := rows[0]
			if row.Result != "Deny" || row.Step != tt.step || row.EntityID != entity || row.ToolID != tt.tool ||
				row.Transport != "stdio" || row.RequestID != "2" || row.Outcome != nil {
				t.Errorf("audit row = %+v", row)
			}
			if tt.reason != "" && row.Reason != tt.reason {
				t.Errorf("reason = %q, want %q", row.Reason, tt.reason)
			}
			var level any
			if row.TrustLevel != nil {
				level = *row.TrustLevel
			}
			if level != tt.level {
				t.Errorf("trust_level = %v, want %v", level, tt.level)
			}
		})
	}
}

// TestAllowedCallOverStdio: an allowed call writes one Allow row before the
// handler runs and its outcome after.
func TestAllowedCallOverStdio(t *testing.T) {
	e := newEnv(t)
	p := e.Stdio("--client", "cc")
	p.Initialize("whatever") // stdio's kind comes from --client
	r := p.CallTool("read_file", map[string]any{"path": "a.txt"})
	if !r.ToolOK() {
		t.Fatalf("read_file: %v", r)
	}
	row := e.waitOutcome(t, p.Cmd.Process.Pid, "2")
	if row.Result != "Allow" || row.Step != "handler" || row.Reason != "trust_level_default_allow" ||
		row.EntityID != "cc:"+e.wsID || *row.TrustLevel != 3 || *row.Outcome != "ok" || row.LatencyUS <= 0 {
		t.Errorf("row = %+v", row)
	}
	// A tool error is an allowed call with a failed outcome.
	r = p.CallTool("read_file", map[string]any{"path": "missing.txt"})
	if !r.ToolFailed() {
		t.Fatalf("missing file: %v", r)
	}
	if row := e.waitOutcome(t, p.Cmd.Process.Pid, "3"); row.Result != "Allow" || *row.Outcome != "tool_error" {
		t.Errorf("tool error row = %+v", row)
	}
}

// TestPerToolOverride: an explicit allow lifts a tool above the level, an
// explicit deny removes it below; tools/list follows.
func TestPerToolOverride(t *testing.T) {
	for _, tt := range []struct {
		set    []string
		allow  bool
		reason string
	}{
		{[]string{"trust", "set", "local:*", "0", "--allow", "read_file"}, true, "explicit_tool_allow"},
		{[]string{"trust", "set", "local:*", "2", "--deny", "read_file"}, false, "explicit_tool_deny"},
	} {
		t.Run(strings.Join(tt.set[3:], " "), func(t *testing.T) {
			e := newEnv(t)
			e.MustRun(tt.set...)
			p := e.Stdio()
			p.Initialize("x")
			listed := slices.Contains(p.ToolNames(), "read_file")
			r := p.CallTool("read_file", map[string]any{"path": "a.txt"})
			if listed != tt.allow || r.ToolOK() != tt.allow {
				t.Fatalf("listed %v, response %v; want allowed=%v", listed, r, tt.allow)
			}
			row, n := rowFor(e.auditRows(t, p.Cmd.Process.Pid), "3")
			if n != 1 || row.Reason != tt.reason {
				t.Errorf("%d rows, row %+v; want reason %s", n, row, tt.reason)
			}
		})
	}
}

// TestStubMode is the spec's test_policy_engine_wired_allowany: with
// policy_stub_mode = true a known entity's call completes and its audit row
// says Allow, policy_stub_allow, even at level 0. An unknown entity is
// still refused: the stub replaces step 3 only.
func TestStubMode(t *testing.T) {
	e := newEnv(t)
	e.WriteConfig("policy_stub_mode = true\n")
	e.MustRun("trust", "set", "local:*", "0")
	p := e.Stdio()
	p.Initialize("x")
	if r := p.CallTool("read_file", map[string]any{"path": "a.txt"}); !r.ToolOK() {
		t.Fatalf("stub mode refused: %v", r)
	}
	row := e.waitOutcome(t, p.Cmd.Process.Pid, "2")
	if row.Result != "Allow" || row.Reason != "policy_stub_allow" || *row.Outcome != "ok" {
		t.Errorf("row = %+v", row)
	}
	// Still deny-by-default for unknown entities, and the sandbox still holds.
	e.MustRun("trust", "rm", "local:*")
	if code, _, _ := p.CallTool("read_file", map[string]any{"path": "a.txt"}).Err(); code != -32002 {
		t.Errorf("unknown entity in stub mode: code %d, want -32002", code)
	}
}

// TestTrustChangeReachesRunningDaemon: `clawd trust set` on the database of
// a running daemon decides its very next call, and the daemon tells the
// client to re-list.
func TestTrustChangeReachesRunningDaemon(t *testing.T) {
	e := newEnv(t)
	p := e.Stdio()
	p.Initialize("x")
	if r := p.CallTool("read_file", map[string]any{"path": "a.txt"}); !r.ToolOK() {
		t.Fatalf("before: %v", r)
	}
	e.MustRun("trust", "set", "local:"+e.wsID, "1", "--deny", "read_file")
	if code, _, data := p.CallTool("read_file", map[string]any{"path": "a.txt"}).Err(); code != -32003 || data["reason"] != "explicit_tool_deny" {
		t.Fatalf("after trust set: code %d data %v, want -32003 explicit_tool_deny", code, data)
	}
	if !p.WaitNotification("notifications/tools/list_changed", 5*time.Second) {
		t.Error("no tools/list_changed after a registry change")
	}
	if slices.Contains(p.ToolNames(), "read_file") {
		t.Error("denied tool still listed")
	}
}

// TestReload: [tools] switches apply to a running server on SIGHUP and on
// a file change, with tools/list_changed; a config that fails validation is
// refused with the reason on stderr and the old one keeps running.
func TestReload(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no SIGHUP; the file-change half needs no signal but shares the setup")
	}
	e := newEnv(t)
	e.WriteConfig("[tools]\nread_file = true\n")
	p := e.Stdio()
	p.Initialize("x")
	if !slices.Contains(p.ToolNames(), "read_file") {
		t.Fatal("read_file not listed at start")
	}

	e.WriteConfig("[tools]\nread_file = false\n")
	p.Cmd.Process.Signal(syscall.SIGHUP)
	if !p.WaitNotification("notifications/tools/list_changed", 5*time.Second) {
		t.Fatal("no tools/list_changed after SIGHUP")
	}
	if slices.Contains(p.ToolNames(), "read_file") {
		t.Error("disabled tool still listed")
	}
	r := p.CallTool("read_file", map[string]any{"path": "a.txt"})
	if code, msg, data := r.Err(); code != -32003 || data["reason"] != "tool_disabled_in_config" ||
		!strings.HasPrefix(msg, "policy_denied: read_file is switched off in clawd's config ([tools] read_file = false)") {
		t.Fatalf("call to a disabled tool: %v", r)
	}
	id := fmt.Sprint(p.LastID())

	// An invalid file: refused, said on stderr, the old config stays.
	e.WriteConfig("bogus_key = 1\n[tools]\nread_file = true\n")
	p.Cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.Stderr.String(), "config reload failed") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := p.Stderr.String(); !strings.Contains(s, "config reload failed") || !strings.Contains(s, "bogus_key") {
		t.Fatalf("stderr does not say why the reload failed:\n%s", s)
	}
	if code, _, _ := p.CallTool("read_file", map[string]any{"path": "a.txt"}).Err(); code != -32003 {
		t.Errorf("after a failed reload the tool is callable (code %d); the old config should stay", code)
	}

	// A valid change without a signal: the file poll picks it up.
	e.WriteConfig("[tools]\nread_file = true\n")
	if !p.WaitNotification("notifications/tools/list_changed", 5*time.Second) {
		t.Fatal("no tools/list_changed after the file changed")
	}
	if r := p.CallTool("read_file", map[string]any{"path": "a.txt"}); !r.ToolOK() {
		t.Errorf("re-enabled tool: %v", r)
	}
	row, n := rowFor(e.auditRows(t, p.Cmd.Process.Pid), id)
	if n != 1 || row.Result != "Deny" || row.Step != "policy" || row.Reason != "tool_disabled_in_config" {
		t.Errorf("disabled call's row: %d, %+v", n, row)
	}
}

// TestCLIBadInput: malformed input exits 2 with a message naming the
// problem, and writes nothing.
func TestCLIBadInput(t *testing.T) {
	e := newEnv(t)
	before := e.MustRun("trust", "list", "--json")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"trust", "set", "local:*", "5"}, `unknown trust level "5"`},
		{[]string{"trust", "set", "local:*", "high"}, `unknown trust level "high"`},
		{[]string{"trust", "set", "phone", "1"}, "KIND:SUBJECT"},
		{[]string{"trust", "set", "robot:x", "1"}, `unknown kind "robot"`},
		{[]string{"trust", "set", "local:*", "1", "--allow", "rm -rf"}, `tool "rm -rf"`},
		{[]string{"trust", "set", "local:*", "1", "--allow", "bash", "--deny", "bash"}, "both --allow and --deny"},
		{[]string{"trust", "set", "local:*", "1", "--frobnicate"}, "unknown flag: --frobnicate"},
		{[]string{"trust", "set", "local:*"}, "needs ENTITY and LEVEL"},
		{[]string{"trust", "rm", "nokind"}, "KIND:SUBJECT"},
		{[]string{"trust", "bogus"}, `unknown command "bogus"`},
		{[]string{"mcp", "allow", "--server", "fs", "--sha256", "xyz"}, "64 hexadecimal digits"},
		{[]string{"mcp", "allow", "--server", "fs", "--sha256", strings.Repeat("a", 63)}, "64 hexadecimal digits"},
		{[]string{"mcp", "allow", "--sha256", strings.Repeat("a", 64)}, "--server ID is required"},
		{[]string{"mcp", "allow", "--server", "a/b", "--sha256", strings.Repeat("a", 64)}, "server id"},
		{[]string{"audit", "--result", "maybe"}, "use Allow or Deny"},
		{[]string{"audit", "--limit", "x"}, `--limit "x": expected a whole number`},
		{[]string{"audit", "--since", "soon"}, "use a duration"},
		{[]string{"audit", "prune"}, "needs --older-than"},
		{[]string{"audit", "--entity", "nocolon"}, "KIND:SUBJECT"},
	}
	for _, tt := range tests {
		_, stderr, code := e.Run(tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("clawd %s: exit %d, stderr %q; want exit 2 mentioning %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
	if after := e.MustRun("trust", "list", "--json"); after != before {
		t.Errorf("bad input changed the registry:\n%s\n%s", before, after)
	}
	if out := e.MustRun("mcp", "allowlist", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("bad input changed the allowlist: %s", out)
	}
}

// TestCLIAuditAndTrust: the commands' normal output.
func TestCLIAuditAndTrust(t *testing.T) {
	e := newEnv(t)
	out := e.MustRun("trust", "list")
	for _, want := range []string{"cc:*", "oc:*", "local:*", "ENTITY"} {
		if !strings.Contains(out, want) {
			t.Errorf("trust list lacks %q:\n%s", want, out)
		}
	}
	e.MustRun("trust", "set", "device:phone1", "1", "--deny", "search,list_dir", "--allow", "write_file")
	out = e.MustRun("trust", "list", "--json")
	if !strings.Contains(out, `"device:phone1"`) || !strings.Contains(out, `"list_dir": "deny"`) || !strings.Contains(out, `"write_file": "allow"`) {
		t.Errorf("trust list --json:\n%s", out)
	}
	p := e.Stdio()
	p.Initialize("x")
	p.CallTool("read_file", map[string]any{"path": "a.txt"})
	p.CallTool("read_file", map[string]any{"path": "../x"})
	p.CloseWait()
	out = e.MustRun("audit")
	if !strings.Contains(out, "Allow") || !strings.Contains(out, "Deny") || !strings.Contains(out, "sandbox") {
		t.Errorf("audit table:\n%s", out)
	}
	out = e.MustRun("audit", "--result", "deny", "--json")
	if !strings.Contains(out, `"step": "sandbox"`) || strings.Contains(out, `"result": "Allow"`) {
		t.Errorf("audit --result deny --json:\n%s", out)
	}
	out = e.MustRun("audit", "--entity", "cc:*")
	if !strings.Contains(out, "No audit rows match") {
		t.Errorf("audit --entity cc:*:\n%s", out)
	}
	sum := strings.Repeat("0123456789ABCDEF", 4)
	e.MustRun("mcp", "allow", "--server", "fs", "--sha256", sum)
	if out := e.MustRun("mcp", "allowlist"); !strings.Contains(out, strings.ToLower(sum)) {
		t.Errorf("allowlist:\n%s", out)
	}
	if _, _, code := e.Run("trust", "rm", "device:nobody"); code != 1 {
		t.Errorf("trust rm of a missing row: exit %d, want 1", code)
	}
}
