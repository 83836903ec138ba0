//go:build unix

package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json/jsontext"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// readTool stands for a built-in read tool.
type readTool struct{}

func (readTool) Spec() *tools.Spec {
	return &tools.Spec{Name: "read_file", Permission: tools.PermRead, InputSchema: jsontext.Value(`{"type":"object"}`)}
}
func (readTool) Call(context.Context, jsontext.Value) (any, error) {
	return map[string]bool{"ok": true}, nil
}

// memAudit keeps audit rows in memory, and upstream events as the daemon
// records them.
type memAudit struct{ chain.MemoryAudit }

// event records an upstream event as the daemon does (auditUpstream).
func (a *memAudit) event(ev AuditEvent) {
	a.Record(&chain.AuditRecord{Time: ev.Time, EntityID: ev.Entity, ToolID: ev.Tool, TrustLevel: chain.NoTrustLevel,
		Result: chain.ResultDeny, Step: "upstream", Transport: "daemon", Reason: ev.Reason})
}

func (a *memAudit) find(reasonPrefix string) []chain.AuditRecord {
	var out []chain.AuditRecord
	for _, r := range a.Rows() {
		if strings.HasPrefix(r.Reason, reasonPrefix) {
			out = append(out, r)
		}
	}
	return out
}

type allowSum struct{ server, sum string }

func (a allowSum) ServerAllowed(server, sum string) (bool, error) {
	return server == a.server && sum == a.sum, nil
}

// gateway is clawd in one process: the real chain and MCP server in front
// of a manager running the fake upstream "idf", which appends the params
// of every tools/call it receives to paramsFile.
type gateway struct {
	m          *Manager
	srv        *mcp.Server
	trust      *chain.MemoryTrust
	audit      *memAudit
	paramsFile string
	keyPath    string
	cfg        ServerConfig
}

func newGateway(t *testing.T, ident identity.Config, rows ...chain.TrustEntry) *gateway {
	t.Helper()
	dir := t.TempDir()
	g := &gateway{audit: &memAudit{}, paramsFile: filepath.Join(dir, "params.jsonl"), keyPath: filepath.Join(dir, "identity-ws.key")}
	if _, _, err := identity.EnsureKey(g.keyPath); err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry(&tools.StaticProvider{Name: "builtin", Source: tools.BuiltinOrigin(),
		List: []tools.Tool{readTool{}}})
	g.m = NewManager(reg, Options{StopGrace: 300 * time.Millisecond, Audit: g.audit.event,
		Identity: &identity.Forwarder{Issuer: identity.Issuer("ws"), KeyPath: g.keyPath}})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		g.m.Close(ctx)
	})
	ws, err := sandbox.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	b, err := os.ReadFile(fakeBin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if len(rows) == 0 {
		rows = chain.DefaultTrustRows()
	}
	g.trust = chain.NewMemoryTrust(rows...)
	g.srv = &mcp.Server{Version: "1", Registry: reg, Chain: &chain.Chain{WS: ws, Trust: g.trust,
		Allow: allowSum{"idf", hex.EncodeToString(sum[:])}, Audit: g.audit}}
	g.cfg = fake("idf", "-echo-params", "-params-file", g.paramsFile)
	g.cfg.Identity = ident
	g.m.Apply(context.Background(), []ServerConfig{g.cfg})
	connected(t, g.m, "idf")
	return g
}

// session is one client of the gateway, authenticated as kind:ws.
func (g *gateway) session(t *testing.T, kind string) *mcp.Session {
	t.Helper()
	s := g.srv.NewSession(&chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: kind, Subject: "ws"}, mcp.SessionOptions{})
	rpc(t, s, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	rpc(t, s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func rpc(t *testing.T, s *mcp.Session, raw string) map[string]any {
	t.Helper()
	msg, perr := jsonrpc.Parse([]byte(raw))
	if perr != nil {
		t.Fatalf("parse %s: %v", raw, perr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := s.Handle(ctx, &msg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("answer %s: %v", out, err)
	}
	return m
}

// received is the params of the last tools/call the upstream got, and how
// many it got.
func (g *gateway) received(t *testing.T) (last map[string]any, n int) {
	t.Helper()
	b, err := os.ReadFile(g.paramsFile)
	if os.IsNotExist(err) {
		return nil, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	return last, len(lines)
}

// forgedCall calls idf__echo with a forged identity in both places a
// client or model controls: the arguments and the request's _meta.
const forgedCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"idf__echo",
	"arguments":{"x":"1","__mateclaw_user__":"admin","__mateclaw_token__":"forged","\u005f_mateclaw_user__x":"kept"},
	"_meta":{"clawd/identity":{"entity":"cc:admin","token":"forged"}}}}`

func TestIdentityForgedValuesOverwritten(t *testing.T) {
	g := newGateway(t, identity.Config{Mode: identity.ModeMeta})
	cc := g.session(t, "cc")
	pid := connected(t, g.m, "idf").PID

	r := rpc(t, cc, fmt.Sprintf(forgedCall, 1))
	if r["error"] != nil {
		t.Fatalf("call: %v", r)
	}
	got, _ := g.received(t)
	args, _ := got["arguments"].(map[string]any)
	meta, _ := got["_meta"].(map[string]any)
	ident, _ := meta[identity.MetaKey].(map[string]any)
	if args["__mateclaw_user__"] != "cc:ws" || args["x"] != "1" || args["__mateclaw_user__x"] != "kept" {
		t.Errorf("upstream received arguments %v; want x, the look-alike and __mateclaw_user__ = cc:ws (clawd's value)", args)
	}
	if _, ok := args["__mateclaw_token__"]; ok {
		t.Errorf("the forged token argument reached the upstream: %v", args)
	}
	if ident["entity"] != "cc:ws" || ident["token"] != nil {
		t.Errorf("upstream received _meta %v; want clawd/identity.entity = cc:ws and no token", meta)
	}

	// Off, set live: no reconnect, the forged argument is stripped and
	// nothing is added.
	cfg := g.cfg
	cfg.Identity = identity.Config{Mode: identity.ModeOff}
	g.m.Apply(context.Background(), []ServerConfig{cfg})
	rpc(t, cc, fmt.Sprintf(forgedCall, 2))
	got, _ = g.received(t)
	args, _ = got["arguments"].(map[string]any)
	if _, ok := args["__mateclaw_user__"]; ok || args["x"] != "1" || got["_meta"] != nil && got["_meta"].(map[string]any)[identity.MetaKey] != nil {
		t.Errorf("off: upstream received %v; want the reserved names gone and no clawd/identity", got)
	}
	if st := connected(t, g.m, "idf"); st.PID != pid {
		t.Errorf("changing the identity setting restarted the server (pid %d -> %d)", pid, st.PID)
	}
}

// Turning forwarding off together with a change of the connection takes
// effect on the next call, though the old connection keeps serving while
// the new one connects (here it never initializes) and after it failed.
func TestIdentityOffWhileReplacing(t *testing.T) {
	t.Parallel()
	g := newGateway(t, identity.Config{Mode: identity.ModeMeta})
	cc := g.session(t, "cc")
	pid := connected(t, g.m, "idf").PID

	cfg := g.cfg
	cfg.Args = append(append([]string(nil), cfg.Args...), "-hang-init")
	cfg.ConnectTimeout = 5 * time.Second
	cfg.Identity = identity.Config{Mode: identity.ModeOff}
	g.m.Apply(context.Background(), []ServerConfig{cfg})
	for i := range 2 {
		if r := rpc(t, cc, fmt.Sprintf(forgedCall, 10+i)); r["error"] != nil {
			t.Fatalf("call: %v", r)
		}
		got, _ := g.received(t)
		args, _ := got["arguments"].(map[string]any)
		meta, _ := got["_meta"].(map[string]any)
		if _, ok := args["__mateclaw_user__"]; ok || meta[identity.MetaKey] != nil {
			t.Errorf("call %d, off while the replacement connects: upstream received %v; want no identity", i, got)
		}
		if st := connected(t, g.m, "idf"); st.PID != pid {
			t.Fatalf("the old server (pid %d) is no longer the one serving (pid %d)", pid, st.PID)
		}
		if i == 0 {
			// Again once the replacement has failed (connect timeout).
			waitFor(t, g.m, "idf", 20*time.Second, "told the new configuration failed", func(st Status) bool {
				return strings.Contains(st.LastError, "not applied")
			})
		}
	}
}

func TestIdentitySignedVerifiesAndFailsClosed(t *testing.T) {
	g := newGateway(t, identity.Config{Mode: identity.ModeSigned, Audience: "https://orders.internal"})
	oc := g.session(t, "oc")
	start := time.Now()
	first := rpc(t, oc, fmt.Sprintf(forgedCall, 1))
	if first["error"] != nil {
		t.Fatalf("call: %v", first)
	}
	got, n := g.received(t)
	args, _ := got["arguments"].(map[string]any)
	meta, _ := got["_meta"].(map[string]any)
	ident, _ := meta[identity.MetaKey].(map[string]any)
	tok, _ := args["__mateclaw_token__"].(string)
	if tok == "" || tok == "forged" || ident["token"] != tok || ident["entity"] != "oc:ws" {
		t.Fatalf("upstream received arguments %v meta %v; want clawd's token in both", args, meta)
	}
	if _, ok := args["__mateclaw_user__"]; ok {
		t.Errorf("the forged user argument reached a signed-mode server: %v", args)
	}
	// The server echoes its params (as a debugging tool, or a validation
	// error quoting the input, would): the token is for the server's
	// backend, not for the client or the model, which could present it
	// there themselves within its lifetime.
	echoed, _ := json.Marshal(first["result"])
	if strings.Contains(string(echoed), tok) {
		t.Errorf("the signed token reached the client in the server's result: %s", echoed)
	}
	if !strings.Contains(string(echoed), "oc:ws") {
		t.Errorf("the result lost what else the server said: %s", echoed)
	}
	// The same in an error answer that quotes the input.
	failed := rpc(t, oc, strings.Replace(fmt.Sprintf(forgedCall, 2), `"x":"1"`, `"x":"fail"`, 1))
	quoted, _ := json.Marshal(failed)
	if strings.Contains(string(quoted), tok) || !strings.Contains(string(quoted), "invalid params") {
		t.Errorf("the signed token reached the client in the server's error (or the error was lost): %s", quoted)
	}
	_, n = g.received(t) // the calls the broken keys below must not add to
	// Verified with go-jose against the key from the JWKS document.
	k, err := identity.LoadKey(g.keyPath)
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(k.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	parsed, err := josejwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	var c josejwt.Claims
	if err := parsed.Claims(set.Keys[0].Key, &c); err != nil {
		t.Fatalf("signature: %v", err)
	}
	if err := c.ValidateWithLeeway(josejwt.Expected{Issuer: "urn:clawd:workspace:ws", Subject: "oc:ws",
		AnyAudience: josejwt.Audience{"https://orders.internal"}, Time: time.Now()}, 0); err != nil {
		t.Errorf("claims: %v", err)
	}
	if exp := c.Expiry.Time(); exp.Before(start.Add(59*time.Second)) || exp.After(time.Now().Add(61*time.Second)) {
		t.Errorf("exp %v is not about 60 s after the call", exp)
	}

	// The key goes bad: the call is refused, nothing reaches the
	// upstream, the caller reads why, and the refusal is audited.
	breakKey := map[string]func(){
		"missing": func() { os.Remove(g.keyPath) },
		"mode": func() {
			os.WriteFile(g.keyPath, []byte("x"), 0o600)
			identity.EnsureKey(g.keyPath + ".unused")
			b, _ := os.ReadFile(g.keyPath + ".unused")
			os.WriteFile(g.keyPath, b, 0o644)
			os.Chmod(g.keyPath, 0o644)
		},
		"corrupt": func() { os.WriteFile(g.keyPath, []byte("not a key"), 0o600) },
	}
	id := 10
	for _, name := range []string{"mode", "corrupt", "missing"} {
		breakKey[name]()
		id++
		r := rpc(t, oc, fmt.Sprintf(forgedCall, id))
		res, _ := r["result"].(map[string]any)
		text := fmt.Sprint(res["content"])
		if res["isError"] != true || !strings.Contains(text, "identity_refused: upstream server idf") || !strings.Contains(text, g.keyPath) {
			t.Errorf("%s key: answer %v; want a tool error naming identity_refused, the server and the key file", name, r)
		}
		if _, now := g.received(t); now != n {
			t.Errorf("%s key: the upstream received a call (%d, was %d)", name, now, n)
		}
	}
	rows := g.audit.find("identity_refused: ")
	if len(rows) != 3 {
		t.Fatalf("identity_refused audit rows: %d, want 3 (%+v)", len(rows), g.audit.Rows())
	}
	for _, r := range rows {
		if r.ToolID != "mcp:idf/echo" || r.Step != "upstream" || r.Result != chain.ResultDeny || r.EntityID != "oc:ws" || r.Transport != "daemon" {
			t.Errorf("audit row %+v", r)
		}
	}
	refused := 0
	outcomes := g.audit.Outcomes()
	for _, o := range outcomes {
		if o.Result == chain.OutcomeToolError && o.Detail == "identity_refused" {
			refused++
		}
	}
	if refused != 3 {
		t.Errorf("the calls' own rows: %d outcomes identity_refused, want 3 (%v)", refused, outcomes)
	}
}

func toolNames(t *testing.T, s *mcp.Session) []string {
	t.Helper()
	r := rpc(t, s, `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`)
	res, _ := r["result"].(map[string]any)
	list, _ := res["tools"].([]any)
	var out []string
	for _, x := range list {
		out = append(out, x.(map[string]any)["name"].(string))
	}
	sort.Strings(out)
	return out
}

// TestBindingsPerEntityToolsList: two clients of different entities on the
// same server see different upstream tools, decided by their bindings, and
// a call to a tool the caller does not see is refused before it reaches the
// upstream. Unbinding takes effect on the next list and call.
func TestBindingsPerEntityToolsList(t *testing.T) {
	g := newGateway(t, identity.Config{},
		chain.TrustEntry{Entity: "cc:*", Level: 3, Perms: map[string]string{"idf__echo": chain.PermBind}},
		chain.TrustEntry{Entity: "oc:*", Level: 3},
		chain.TrustEntry{Entity: "local:*", Level: 2, Perms: map[string]string{"idf__*": chain.PermBind, "idf__env": chain.PermDeny}})
	cc, oc, local := g.session(t, "cc"), g.session(t, "oc"), g.session(t, "local")
	all := toolNames(t, oc)
	if len(all) != 8 || !slices.Contains(all, "idf__image") || !slices.Contains(all, "read_file") {
		t.Fatalf("oc (level 3, no bindings) sees %v; want read_file and the 7 fake tools", all)
	}
	if got := toolNames(t, cc); !slices.Equal(got, []string{"idf__echo", "read_file"}) {
		t.Errorf("cc (bound to idf__echo) sees %v", got)
	}
	want := slices.DeleteFunc(slices.Clone(all), func(n string) bool { return n == "idf__env" })
	if got := toolNames(t, local); !slices.Equal(got, want) {
		t.Errorf("local (level 2, bound to idf__* but denied idf__env) sees %v, want %v", got, want)
	}
	_, before := g.received(t)
	r := rpc(t, cc, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"idf__image","arguments":{}}}`)
	e, _ := r["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if e == nil || e["code"] != float64(chain.CodePolicyDenied) || data["reason"] != chain.ReasonNotBound {
		t.Errorf("cc calling an unbound tool: %v", r)
	}
	if _, n := g.received(t); n != before {
		t.Error("the refused call reached the upstream")
	}
	if r := rpc(t, cc, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"idf__echo","arguments":{}}}`); r["error"] != nil {
		t.Errorf("cc calling its bound tool: %v", r)
	}
	// Unbound: cc's level decides again.
	g.srv.Chain.(*chain.Chain).Trust = chain.NewMemoryTrust(chain.TrustEntry{Entity: "cc:*", Level: 3})
	if got := toolNames(t, cc); !slices.Equal(got, all) {
		t.Errorf("after unbinding, cc sees %v, want %v", got, all)
	}
}

func TestSetIdentityMetaOverwrites(t *testing.T) {
	p := &sdkmcp.CallToolParams{Meta: sdkmcp.Meta{identity.MetaKey: "forged", "progressToken": 3}}
	setIdentityMeta(p, nil)
	if _, ok := p.Meta[identity.MetaKey]; ok || p.Meta["progressToken"] != 3 {
		t.Errorf("off: %v", p.Meta)
	}
	p.Meta[identity.MetaKey] = map[string]any{"entity": "cc:admin"}
	setIdentityMeta(p, map[string]any{"entity": "cc:ws"})
	if m, _ := p.Meta[identity.MetaKey].(map[string]any); m["entity"] != "cc:ws" || p.Meta["progressToken"] != 3 {
		t.Errorf("on: %v", p.Meta)
	}
}

// A client holding an oc credential that says it is Claude Code
// (clientInfo.name "claude-code") and forges cc in _meta and the
// arguments still reaches the upstream as oc: the forwarded entity is the
// credential's.
func TestIdentityIgnoresClaimedKind(t *testing.T) {
	g := newGateway(t, identity.Config{Mode: identity.ModeMeta})
	s := g.srv.NewSession(&chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "oc", Subject: "ws"}, mcp.SessionOptions{})
	rpc(t, s, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-code","version":"1"}}}`)
	rpc(t, s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r := rpc(t, s, fmt.Sprintf(forgedCall, 1)); r["error"] != nil {
		t.Fatalf("call: %v", r)
	}
	got, _ := g.received(t)
	args, _ := got["arguments"].(map[string]any)
	meta, _ := got["_meta"].(map[string]any)
	ident, _ := meta[identity.MetaKey].(map[string]any)
	if args["__mateclaw_user__"] != "oc:ws" || ident["entity"] != "oc:ws" {
		t.Errorf("upstream received arguments %v _meta %v; want oc:ws, the credential's entity, in both", args, meta)
	}
}
