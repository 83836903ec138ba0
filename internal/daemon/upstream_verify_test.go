package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/upstream"
)

// A minimal MCP server in JavaScript: initialize, one tool, tools/call.
const jsServer = `const rl = require('readline').createInterface({input: process.stdin});
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'initialize') send({jsonrpc: '2.0', id: m.id, result: {protocolVersion: m.params.protocolVersion, capabilities: {tools: {}}, serverInfo: {name: 'js', version: '1'}}});
  else if (m.method === 'tools/list') send({jsonrpc: '2.0', id: m.id, result: {tools: [{name: 'hello', inputSchema: {type: 'object'}}]}});
  else if (m.method === 'tools/call') send({jsonrpc: '2.0', id: m.id, result: {content: [{type: 'text', text: 'hello from the approved script'}]}});
  else send({jsonrpc: '2.0', id: m.id, error: {code: -32601, message: 'no'}});
});
`

// needsCommand skips the test when name is not installed.
func needsCommand(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skip(name + " is not installed")
	}
}

// openStore opens a fresh store in dir, closed when the test ends (after
// the managers started later have stopped).
func openStore(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, "clawd.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// startManager is a manager with opts and a short stop grace, closed (its
// processes ended) when the test ends.
func startManager(t *testing.T, reg *tools.Registry, opts upstream.Options) *upstream.Manager {
	t.Helper()
	opts.StopGrace = 300 * time.Millisecond
	m := upstream.NewManager(reg, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		m.Close(ctx)
	})
	return m
}

func waitState(t *testing.T, m *upstream.Manager, name, state string) upstream.Status {
	t.Helper()
	var last upstream.Status
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, st := range m.Status() {
			if st.Name == name {
				last = st
				if st.State == state {
					return st
				}
			}
		}
	}
	t.Fatalf("server %s not %s within 30 s; last %+v", name, state, last)
	return last
}

// `node srv.js`: refused (and audited) until approved, with the exact
// command and the allow line naming both hashes; approved, it runs; the
// script changed afterwards, the next spawn is refused with the fix, and
// the node binary itself approved does not help.
func TestNodeScriptPinned(t *testing.T) {
	needsCommand(t, "node")
	dir := t.TempDir()
	db := openStore(t, dir)
	d := &Daemon{Store: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	script := filepath.Join(dir, "srv.js")
	if err := os.WriteFile(script, []byte(jsServer), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	w, err := db.Audit()
	if err != nil {
		t.Fatal(err)
	}
	aud := newUpstreamAuditor(w, d.Logger.Warn)
	m := startManager(t, reg, upstream.Options{VerifyLaunch: VerifyUpstream(db), OnEvent: aud.add})
	cfg := upstream.ServerConfig{Name: "js", Transport: upstream.TransportStdio, Command: "node", Args: []string{"srv.js", "--label", "a b"},
		Cwd: dir, Enabled: true, ConnectTimeout: 20 * time.Second, ReadTimeout: 20 * time.Second}
	m.Apply(context.Background(), []upstream.ServerConfig{cfg})

	st := waitState(t, m, "js", upstream.StateUnavailable)
	l, err := upstream.Inspect(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"supply_chain_unverified", "node srv.js --label 'a b'",
		"clawd mcp allow --server js --sha256 " + l.ExecSHA256 + " --script-sha256 " + l.ScriptSHA256} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("last error %q lacks %q", st.LastError, want)
		}
	}
	// The refusal is audited off the manager's goroutine: wait for its row.
	var rows []store.AuditRow
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rows, err = db.QueryAudit(context.Background(), store.AuditFilter{Tool: "mcp:js"})
		if err != nil || len(rows) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || len(rows) == 0 || rows[0].Result != "Deny" || rows[0].EntityID != "clawd" || rows[0].Step != "upstream" ||
		!strings.HasPrefix(rows[0].Reason, "refuse: supply_chain_unverified") {
		t.Fatalf("audit rows %+v, %v; want a Deny row of clawd at step upstream", rows, err)
	}

	// Approve exactly what was shown.
	if _, err := db.Approve(context.Background(), "js", l.ExecSHA256, LaunchPins(l)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * store.FreshFor) // the allowlist snapshot is re-read after FreshFor
	if err := m.Refresh(context.Background(), "js"); err != nil {
		t.Fatalf("refresh after approval: %v", err)
	}
	waitState(t, m, "js", upstream.StateConnected)
	e, ok := reg.Lookup("js__hello")
	if !ok {
		t.Fatalf("js__hello not registered: %v", reg.Names())
	}
	if o := e.Provider.Origin(); o.Script != l.Script {
		t.Errorf("provider origin %+v; want the script %s for the chain's per-call check", o, l.Script)
	}
	res, err := e.Tool.Call(context.Background(), jsontext.Value(`{}`))
	if err != nil || !strings.Contains(string(res.(*tools.CallResult).Content), "approved script") {
		t.Fatalf("call: %v %v", res, err)
	}

	// The script changes (node and its hash unchanged): refused at the
	// next spawn, with the line that would approve the new one.
	if err := os.WriteFile(script, []byte(jsServer+"// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Refresh(context.Background(), "js"); err == nil {
		t.Fatal("refresh with a changed script succeeded")
	}
	st = waitState(t, m, "js", upstream.StateUnavailable)
	if !strings.Contains(st.LastError, "script "+l.Script) || !strings.Contains(st.LastError, "--script-sha256 ") ||
		strings.Contains(st.LastError, "executable ") {
		t.Errorf("last error %q; want only the script named as not approved, and the allow line", st.LastError)
	}
}

// A floating npx spec is refused by the daemon's check whatever the
// allowlist holds, with the exact command and the pkg@version fix.
func TestFloatingNpxRefused(t *testing.T) {
	needsCommand(t, "npx")
	db := openStore(t, t.TempDir())
	cfg := upstream.ServerConfig{Name: "fs", Transport: upstream.TransportStdio, Command: "npx",
		Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, Cwd: t.TempDir(), Enabled: true}
	l, err := upstream.Inspect(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Even with npx itself approved.
	if _, err := db.Approve(context.Background(), "fs", l.ExecSHA256, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * store.FreshFor)
	err = VerifyUpstream(db)("fs", l)
	if err == nil {
		t.Fatal("a floating npx spec was accepted")
	}
	for _, want := range []string{"supply_chain_unverified", "npx -y @modelcontextprotocol/server-filesystem /tmp", "floating spec",
		"npx -y @modelcontextprotocol/server-filesystem@"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
}

// The executable itself (here a #! node script run by descriptor) is
// replaced after approval: the next spawn hashes the new file and is
// refused, the server unavailable with the line that would approve it.
func TestExecutableReplacedAfterApproval(t *testing.T) {
	needsCommand(t, "node")
	dir := t.TempDir()
	db := openStore(t, dir)
	bin := filepath.Join(dir, "server")
	if err := os.WriteFile(bin, []byte("#!/usr/bin/env node\n"+jsServer), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := upstream.ServerConfig{Name: "bin", Transport: upstream.TransportStdio, Command: bin, Enabled: true,
		ConnectTimeout: 20 * time.Second, ReadTimeout: 20 * time.Second}
	l, err := upstream.Inspect(cfg)
	if err != nil || l.Script != "" {
		t.Fatalf("inspect: %+v %v", l, err)
	}
	if _, err := db.Approve(context.Background(), "bin", l.ExecSHA256, nil); err != nil {
		t.Fatal(err)
	}
	m := startManager(t, tools.NewRegistry(), upstream.Options{VerifyLaunch: VerifyUpstream(db)})
	m.Apply(context.Background(), []upstream.ServerConfig{cfg})
	waitState(t, m, "bin", upstream.StateConnected)

	marker := filepath.Join(dir, "ran")
	if err := os.WriteFile(bin+".new", []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(bin+".new", bin); err != nil {
		t.Fatal(err)
	}
	if err := m.Refresh(context.Background(), "bin"); err == nil {
		t.Fatal("refresh with a replaced executable succeeded")
	}
	st := waitState(t, m, "bin", upstream.StateUnavailable)
	if !strings.Contains(st.LastError, "supply_chain_unverified") || !strings.Contains(st.LastError, "executable "+bin) ||
		!strings.Contains(st.LastError, "if you trust it: clawd mcp allow --server bin --sha256 ") {
		t.Errorf("last error %q", st.LastError)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the replacement ran")
	}
}
