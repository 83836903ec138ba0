package chain_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/transport"
	"github.com/clawde/clawd/test/clawdtest"
)

// effectTool stands in for a built-in tool this build may not register yet:
// it has the real name, permission hint and path argument, and a real
// effect in the workspace (a file), so a test can tell whether its handler
// ran. When the real tool is registered it shadows this one (the registry's
// first provider wins), and the tests still hold: they pass valid
// arguments and check effects the real tool has too.
type effectTool struct {
	spec tools.Spec
	ws   *sandbox.Workspace
}

func (t *effectTool) Spec() *tools.Spec { return &t.spec }

func (t *effectTool) Call(_ context.Context, args jsontext.Value) (any, error) {
	switch t.spec.Name {
	case "write_file":
		var a struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}
		if err := tools.DecodeArgs(args, &a); err != nil {
			return nil, err
		}
		if err := t.ws.Root.WriteFile(a.Path, []byte(a.Content), 0o644); err != nil {
			return nil, err
		}
	case "bash": // the tests run "touch bash-ran"
		f, err := t.ws.Root.Create("bash-ran")
		if err != nil {
			return nil, err
		}
		f.Close()
	}
	return map[string]any{"ran": t.spec.Name}, nil
}

func standIns(ws *sandbox.Workspace) tools.Provider {
	mk := func(name string, p tools.Permission, pathArg string) tools.Tool {
		return &effectTool{spec: tools.Spec{Name: name, Permission: p, PathArgs: []string{pathArg},
			InputSchema: jsontext.Value(`{"type":"object"}`)}, ws: ws}
	}
	return &tools.StaticProvider{Name: "test-stand-ins", Source: tools.BuiltinOrigin(), List: []tools.Tool{
		mk("bash", tools.PermExecute, "working_dir"),
		mk("write_file", tools.PermWrite, "path"),
		mk("list_dir", tools.PermRead, "path"),
		mk("search", tools.PermRead, "path"),
	}}
}

// inProcess assembles the daemon like `clawd serve` does (config, real
// database, workspace) and serves one stdio session to caller kind over
// pipes.
func inProcess(t *testing.T, e *env, kind string, extra ...tools.Provider) (*clawdtest.Client, *daemon.Daemon) {
	t.Helper()
	e.Setenv()
	d, err := daemon.New(daemon.Options{Workspace: e.WS, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	d.Server.Registry.Add(standIns(d.WS))
	for _, p := range extra {
		d.Server.Registry.Add(p)
	}
	caller := d.StdioCaller(kind)
	if kind == "" {
		caller = &chain.Caller{Transport: "stdio", Kind: "local", Subject: d.WorkspaceID} // not authenticated
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		transport.ServeStdio(context.Background(), d.Server, caller, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		<-done
		d.Close()
	})
	c := clawdtest.NewClient(t, inW, outR)
	c.Initialize("x")
	return c, d
}

var readCalls = []struct {
	tool string
	args map[string]any
}{
	{"read_file", map[string]any{"path": "a.txt"}},
	{"list_dir", map[string]any{"path": "."}},
	{"search", map[string]any{"query": "hello"}},
}

// TestLevelOneEntity: the spec's nClaw case. A level-1 entity may call the
// read tools, is refused bash and write_file with -32003 (their handlers
// never run), and tools/list shows it only the read tools.
func TestLevelOneEntity(t *testing.T) {
	e := newEnv(t)
	e.MustRun("trust", "set", "device:"+e.wsID, "1")
	c, _ := inProcess(t, e, "device")

	listed := c.ToolNames()
	slices.Sort(listed)
	if strings.Join(listed, " ") != "list_dir read_file search" {
		t.Errorf("tools/list = %v, want the read tools only", listed)
	}
	for _, rc := range readCalls {
		if r := c.CallTool(rc.tool, rc.args); !r.ToolOK() {
			t.Errorf("%s refused: %v", rc.tool, r)
		}
	}
	for _, tc := range []struct {
		tool   string
		args   map[string]any
		effect string
	}{
		{"bash", map[string]any{"command": "touch bash-ran"}, "bash-ran"},
		{"write_file", map[string]any{"path": "new.txt", "content": "x"}, "new.txt"},
	} {
		code, msg, data := c.CallTool(tc.tool, tc.args).Err()
		if code != -32003 || !strings.HasPrefix(msg, "policy_denied: "+tc.tool+" needs level 2") || data["reason"] != "trust_level_too_low" {
			t.Errorf("%s: error %d %q %v; want -32003 policy_denied trust_level_too_low", tc.tool, code, msg, data)
		}
		if _, err := os.Stat(filepath.Join(e.WS, tc.effect)); err == nil {
			t.Errorf("%s's handler ran although the call was refused", tc.tool)
		}
	}
	rows := e.auditRows(t, os.Getpid())
	var got []string
	for _, r := range rows {
		got = append(got, r.ToolID+"="+r.Result)
	}
	want := "read_file=Allow list_dir=Allow search=Allow bash=Deny write_file=Deny"
	if strings.Join(got, " ") != want {
		t.Errorf("audit rows %v, want %s", got, want)
	}
}

// TestOverridesWriteAndExecute: --allow write_file lifts a level-1 entity,
// --deny bash stops a level-3 one.
func TestOverridesWriteAndExecute(t *testing.T) {
	e := newEnv(t)
	e.MustRun("trust", "set", "device:"+e.wsID, "1", "--allow", "write_file")
	e.MustRun("trust", "set", "cc:"+e.wsID, "3", "--deny", "bash")

	c, _ := inProcess(t, e, "device")
	if r := c.CallTool("write_file", map[string]any{"path": "new.txt", "content": "x"}); !r.ToolOK() {
		t.Fatalf("explicitly allowed write_file refused: %v", r)
	}
	if b, err := os.ReadFile(filepath.Join(e.WS, "new.txt")); err != nil || string(b) != "x" {
		t.Errorf("write_file did not write: %q %v", b, err)
	}

	cc, _ := inProcess(t, e, "cc")
	if code, _, data := cc.CallTool("bash", map[string]any{"command": "touch bash-ran"}).Err(); code != -32003 || data["reason"] != "explicit_tool_deny" {
		t.Errorf("explicitly denied bash: %d %v", code, data)
	}
	if _, err := os.Stat(filepath.Join(e.WS, "bash-ran")); err == nil {
		t.Error("denied bash ran")
	}
	if slices.Contains(cc.ToolNames(), "bash") {
		t.Error("denied bash is listed")
	}
}

// TestUnauthenticated: a session whose transport did not authenticate the
// caller gets -32001 and writes no audit row.
func TestUnauthenticated(t *testing.T) {
	e := newEnv(t)
	c, _ := inProcess(t, e, "")
	if code, msg, _ := c.CallTool("read_file", map[string]any{"path": "a.txt"}).Err(); code != -32001 ||
		!strings.HasPrefix(msg, "unauthorized: the connection did not authenticate") {
		t.Errorf("error %d %q, want -32001 unauthorized", code, msg)
	}
	if len(c.ToolNames()) != 0 {
		t.Error("an unauthenticated caller sees tools")
	}
	if rows := e.auditRows(t, os.Getpid()); len(rows) != 0 {
		t.Errorf("%d audit rows for an auth failure, want 0", len(rows))
	}
}

// upstreamTool is a tool of a fake external provider.
type upstreamTool struct{ ran *int }

func (u upstreamTool) Spec() *tools.Spec {
	return &tools.Spec{Name: "fs__stat", Permission: tools.PermUpstream, InputSchema: jsontext.Value(`{"type":"object"}`)}
}
func (u upstreamTool) Call(context.Context, jsontext.Value) (any, error) {
	*u.ran++
	return map[string]bool{"ok": true}, nil
}

// TestSupplyChain: a provider whose binary is not allowlisted is refused
// with -32004 naming the hash, until `clawd mcp allow` (another process,
// same database) allowlists it; replacing the binary refuses it again
// (every call decided store.FreshFor after the replacement).
func TestSupplyChain(t *testing.T) {
	e := newEnv(t)
	bin := filepath.Join(e.Home, "fs-server")
	os.WriteFile(bin, []byte("#!/bin/sh\necho fs v1\n"), 0o755)
	sum := sha256.Sum256([]byte("#!/bin/sh\necho fs v1\n"))
	hexSum := hex.EncodeToString(sum[:])
	ran := 0
	prov := &tools.StaticProvider{Name: "fs-server", Source: tools.LocalOrigin(bin), List: []tools.Tool{upstreamTool{&ran}}}
	c, _ := inProcess(t, e, "cc", prov)

	if slices.Contains(c.ToolNames(), "fs__stat") {
		t.Error("tool of a non-allowlisted server is listed")
	}
	r := c.CallTool("fs__stat", map[string]any{})
	code, msg, data := r.Err()
	if code != -32004 || !strings.HasPrefix(msg, "supply_chain_denied: the binary of upstream server fs-server") ||
		!strings.Contains(msg, "clawd mcp allow --server fs-server --sha256 "+hexSum) || data["sha256"] != hexSum || data["server"] != "fs-server" ||
		!strings.Contains(data["hint"].(string), "clawd mcp allow --server fs-server --sha256 "+hexSum) {
		t.Fatalf("response %v", r)
	}
	if ran != 0 {
		t.Fatal("handler ran")
	}
	row, n := rowFor(e.auditRows(t, os.Getpid()), "3")
	if n != 1 || row.Step != "supply_chain" || row.Result != "Deny" || row.Reason != "binary_not_allowlisted" {
		t.Errorf("audit: %d rows, %+v", n, row)
	}

	e.MustRun("mcp", "allow", "--server", "fs-server", "--sha256", hexSum)
	if r := c.CallTool("fs__stat", map[string]any{}); !r.ToolOK() || ran != 1 {
		t.Fatalf("after allowlisting: %v (ran %d)", r, ran)
	}
	if !slices.Contains(c.ToolNames(), "fs__stat") {
		t.Error("allowlisted server's tool not listed")
	}

	os.WriteFile(bin, []byte("#!/bin/sh\necho fs v2, evil\n"), 0o755)
	// The per-call look at the binary is reused for store.FreshFor
	// (docs/security.md): a call decided after that is refused.
	time.Sleep(store.FreshFor + time.Millisecond)
	if code, _, data := c.CallTool("fs__stat", map[string]any{}).Err(); code != -32004 || data["sha256"] == hexSum {
		t.Errorf("replaced binary: %d %v", code, data)
	}
	if ran != 1 {
		t.Error("replaced binary's tool ran")
	}
}

// swapTool models the race the chain's sandbox step cannot close: between
// the check and the handler's open, "link" is swapped from a directory in
// the workspace to a symlink leading outside. The handler opens through
// os.Root, which refuses; the call ends -32005 and its audit row, written
// Allow before the handler ran, becomes Deny by the sandbox step.
type swapTool struct {
	ws      *sandbox.Workspace
	outside string
}

func (s *swapTool) Spec() *tools.Spec {
	return &tools.Spec{Name: "swap_read", Permission: tools.PermRead, PathArgs: []string{"path"},
		InputSchema: jsontext.Value(`{"type":"object"}`)}
}

func (s *swapTool) Call(context.Context, jsontext.Value) (any, error) {
	link := filepath.Join(s.ws.Dir, "link")
	if err := os.RemoveAll(link); err != nil {
		return nil, err
	}
	if err := os.Symlink(s.outside, link); err != nil {
		return nil, err
	}
	f, err := s.ws.Root.Open("link/secret")
	if err != nil {
		return nil, sandbox.AsViolation("link/secret", err)
	}
	f.Close()
	return map[string]string{"leaked": "yes"}, nil
}

func TestSandboxViolationDuringHandler(t *testing.T) {
	e := newEnv(t)
	os.Mkdir(filepath.Join(e.WS, "link"), 0o755)
	os.WriteFile(filepath.Join(e.WS, "link", "secret"), []byte("inside"), 0o644)
	e.Setenv()
	c, d := inProcess(t, e, "cc")
	d.Server.Registry.Add(&tools.StaticProvider{Name: "race", Source: tools.BuiltinOrigin(), List: []tools.Tool{&swapTool{d.WS, e.outside}}})
	r := c.CallTool("swap_read", map[string]any{"path": "link/secret"})
	if code, msg, data := r.Err(); code != -32005 || !strings.HasPrefix(msg, `sandbox_violation: "link/secret": `) || data["path"] != "link/secret" {
		t.Fatalf("response %v; want -32005 for link/secret", r)
	}
	row := e.waitOutcome(t, os.Getpid(), fmt.Sprint(c.LastID()))
	if row.Result != "Deny" || row.Step != "sandbox" || *row.Outcome != "sandbox_violation" {
		t.Errorf("row = %+v; want Deny by sandbox with outcome sandbox_violation", row)
	}
}
