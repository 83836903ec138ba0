package mcp

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/tools"
)

// modernMeta builds a 2026-07-28 _meta; extra members are added verbatim.
func metaJSON(extra string) string {
	m := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"1"}`
	if extra != "" {
		m += "," + extra
	}
	return `{` + m + `}`
}

// modernReq is a request line claiming 2026-07-28; params is the rest of
// params (without braces), may be empty.
func modernReq(id, method, params, metaExtra string) string {
	p := `"_meta":` + metaJSON(metaExtra)
	if params != "" {
		p = params + "," + p
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + p + `}}`
}

// reportTool reports progress twice and logs at info and debug, then answers.
func reportTool() tools.Tool {
	return newFuncTool("report", tools.PermRead, func(ctx context.Context, args jsontext.Value) (any, error) {
		tools.ReportProgress(ctx, 1, 2, "half")
		tools.Log(ctx, "info", "report", map[string]any{"step": "info"})
		tools.Log(ctx, "debug", "report", map[string]any{"step": "debug"})
		tools.ReportProgress(ctx, 2, 2, "done")
		return map[string]any{"ok": true}, nil
	})
}

// callerChain wraps testChain and records each call's caller.
type callerChain struct {
	*testChain
	mu      sync.Mutex
	callers []chain.Caller
}

func (c *callerChain) Run(ctx context.Context, call *chain.Call, next chain.Next) chain.Answer {
	c.mu.Lock()
	c.callers = append(c.callers, *call.Caller)
	c.mu.Unlock()
	return c.testChain.Run(ctx, call, next)
}

func (c *callerChain) last() chain.Caller {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.callers[len(c.callers)-1]
}

// recvUntil reads lines until one has the given id, returning the lines
// before it and the response.
func (h *harness) recvUntil(id string) (notes []string, resp string) {
	h.t.Helper()
	for {
		line := h.recv()
		var m struct {
			ID jsontext.Value `json:"id"`
		}
		json.Unmarshal([]byte(line), &m)
		if string(m.ID) == id {
			return notes, line
		}
		notes = append(notes, line)
	}
}

// quiet asserts that nothing arrives within d.
func (h *harness) quiet(d time.Duration) {
	h.t.Helper()
	select {
	case line := <-h.lines:
		h.t.Fatalf("unexpected message: %s", line)
	case <-time.After(d):
	}
}

func resultOf(t *testing.T, line string) map[string]any {
	t.Helper()
	r := decode(t, line)
	if r.Error != nil {
		t.Fatalf("error response: %s", line)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return m
}

// Real clients probe with server/discover and then, if they stay legacy,
// initialize on the same stream: both must succeed, and each era keeps its
// own result shape afterwards.
func TestDiscoverThenInitializeOnOneStream(t *testing.T) {
	h := newHarness(t, testServer(&testChain{}))
	h.send(modernReq(`"d"`, "server/discover", "", ""))
	d := resultOf(t, h.recv())
	if d["resultType"] != "complete" || d["cacheScope"] != "private" || d["ttlMs"] != 3600000.0 {
		t.Errorf("discover result: %v", d)
	}
	versions, _ := d["supportedVersions"].([]any)
	if !slices.Contains(versions, any("2026-07-28")) || !slices.Contains(versions, any("2025-11-25")) {
		t.Errorf("supportedVersions = %v", versions)
	}
	caps, _ := d["capabilities"].(map[string]any)
	if tl, _ := caps["tools"].(map[string]any); tl["listChanged"] != true {
		t.Errorf("capabilities = %v", caps)
	}
	meta, _ := d["_meta"].(map[string]any)
	if si, _ := meta[MetaServerInfo].(map[string]any); si["name"] != ServerName || si["version"] != "9.9.9" {
		t.Errorf("_meta = %v", meta)
	}

	init := resultOf(t, h.initialize("2025-11-25"))
	if init["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize after discover: %v", init)
	}
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if l := resultOf(t, h.recv()); l["resultType"] != nil || l["ttlMs"] != nil {
		t.Errorf("legacy tools/list carries 2026 members: %v", l)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`)
	if c := resultOf(t, h.recv()); c["resultType"] != nil || c["isError"] != false {
		t.Errorf("legacy tools/call: %v", c)
	}
	h.send(modernReq("3", "tools/list", "", ""))
	if l := resultOf(t, h.recv()); l["resultType"] != "complete" {
		t.Errorf("modern tools/list on an initialized stream: %v", l)
	}
}

func TestModernErrors(t *testing.T) {
	h := newHarness(t, testServer(&testChain{}))
	noMeta := func(id, method string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{}}`
	}
	cases := []struct {
		name, line string
		code       int
		want       string
	}{
		{"unsupported version", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, CodeUnsupportedProtocolVersion, `"requested":"1900-01-01"`},
		{"discover without _meta", noMeta("2", "server/discover"), jsonrpc.CodeInvalidParams, MetaProtocolVersion},
		{"discover without params", `{"jsonrpc":"2.0","id":3,"method":"server/discover"}`, jsonrpc.CodeInvalidParams, MetaProtocolVersion},
		{"no clientCapabilities", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, jsonrpc.CodeInvalidParams, MetaClientCapabilities},
		{"clientCapabilities not an object", `{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}`, jsonrpc.CodeInvalidParams, MetaClientCapabilities},
		{"version not a string", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}`, jsonrpc.CodeInvalidParams, "must be a string"},
		{"bad clientInfo", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"me"}}}`, jsonrpc.CodeInvalidParams, MetaClientInfo},
		{"bad logLevel", modernReq("8", "tools/list", "", `"io.modelcontextprotocol/logLevel":"loud"`), jsonrpc.CodeInvalidParams, MetaLogLevel},
		{"initialize removed", modernReq("9", "initialize", `"protocolVersion":"2025-11-25","capabilities":{}`, ""), jsonrpc.CodeMethodNotFound, "initialize"},
		{"ping removed", modernReq("10", "ping", "", ""), jsonrpc.CodeMethodNotFound, "ping"},
		{"setLevel removed", modernReq("11", "logging/setLevel", `"level":"debug"`, ""), jsonrpc.CodeMethodNotFound, "logging/setLevel"},
		{"subscribe removed", modernReq("12", "resources/subscribe", `"uri":"file:///x"`, ""), jsonrpc.CodeMethodNotFound, "resources/subscribe"},
		{"unsubscribe removed", modernReq("13", "resources/unsubscribe", `"uri":"file:///x"`, ""), jsonrpc.CodeMethodNotFound, "resources/unsubscribe"},
		{"prompts not offered", modernReq("14", "prompts/list", "", ""), jsonrpc.CodeMethodNotFound, "prompts/list"},
		{"unknown method", modernReq("15", "nope/nope", "", ""), jsonrpc.CodeMethodNotFound, "nope/nope"},
		{"tools/call missing _meta member", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, jsonrpc.CodeInvalidParams, MetaClientCapabilities},
		{"tools/call unsupported version", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, CodeUnsupportedProtocolVersion, "2099-01-01"},
		{"authenticate is stateful", modernReq("18", MethodAuthenticate, `"credential":"x"`, ""), jsonrpc.CodeMethodNotFound, MethodAuthenticate},
		// A legacy claim on discover: the versions this path serves, not the
		// requested one again.
		{"discover with a legacy claim", `{"jsonrpc":"2.0","id":19,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}`, CodeUnsupportedProtocolVersion, `"supported":["2026-07-28"]`},
		{"unknown version lists every version", `{"jsonrpc":"2.0","id":20,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, CodeUnsupportedProtocolVersion, `"supported":["2026-07-28","2025-11-25"`},
	}
	for _, c := range cases {
		h.send(c.line)
		line := h.recv()
		r := decode(t, line)
		if r.Error == nil || r.Error.Code != c.code || !strings.Contains(line, c.want) {
			t.Errorf("%s: got %s, want code %d mentioning %q", c.name, line, c.code, c.want)
		}
		if c.code == CodeUnsupportedProtocolVersion {
			sup, _ := r.Error.Data["supported"].([]any)
			want := len(AllVersions())
			if req, _ := r.Error.Data["requested"].(string); IsSupportedVersion(req) {
				want = len(ModernVersions) // a legacy claim: only what this path serves
			}
			if len(sup) != want || sup[0] != "2026-07-28" || slices.Contains(sup, r.Error.Data["requested"]) {
				t.Errorf("%s: data.supported = %v", c.name, r.Error.Data)
			}
		}
	}
	// None of these touched the session: it still needs initialize.
	h.send(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`)
	if r := decode(t, h.recv()); r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("a stateless request initialized the session")
	}
}

// Every 2026 result carries resultType, whatever produced it.
func TestResultTypeOnEveryModernResult(t *testing.T) {
	tc := &testChain{deny: map[string]*jsonrpc.Error{}}
	h := newHarness(t, testServer(tc))
	lines := []string{
		modernReq("1", "server/discover", "", ""),
		modernReq("2", "tools/list", "", ""),
		modernReq("3", "tools/call", `"name":"echo","arguments":{"x":"y"}`, ""),
		modernReq("4", "tools/call", `"name":"fail","arguments":{}`, ""),
		modernReq("5", "clawd/echo", "", ""),
	}
	for i, l := range lines {
		h.send(l)
		line := h.recv()
		if !strings.HasPrefix(line, `{"jsonrpc":"2.0","id":`+string(rune('1'+i))+`,"result":{"resultType":"complete"`) {
			t.Errorf("result %d without resultType first: %s", i+1, line)
		}
	}
}

func TestModernToolsList(t *testing.T) {
	tc := &testChain{hidden: map[string]bool{"panic": true}}
	h := newHarness(t, testServer(tc, newFuncTool("aardvark", tools.PermRead, nil)))
	h.send(modernReq("1", "tools/list", "", ""))
	l := resultOf(t, h.recv())
	if l["ttlMs"] != 60000.0 || l["cacheScope"] != "private" {
		t.Errorf("cache hints: %v", l)
	}
	var names []string
	for _, x := range l["tools"].([]any) {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	want := []string{"aardvark", "block", "echo", "escape", "fail"}
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v (sorted, the hidden one left out)", names, want)
	}
	// The same request again gives the same bytes.
	h.send(modernReq("1", "tools/list", "", ""))
	first := h.recv()
	h.send(modernReq("1", "tools/list", "", ""))
	if again := h.recv(); again != first {
		t.Errorf("tools/list not deterministic:\n%s\n%s", first, again)
	}
}

// A modern call goes through the chain as a legacy one does: the entity
// comes from the transport's credential, clientInfo is only the claim, the
// session's own caller is left alone, and a cancel stops it unanswered.
func TestModernCallIdentityAndCancel(t *testing.T) {
	cc := &callerChain{testChain: &testChain{}}
	srv := testServer(nil)
	srv.Chain = cc
	h := newHarness(t, srv)
	h.send(modernReq("1", "tools/call", `"name":"echo","arguments":{}`, ""))
	if r := resultOf(t, h.recv()); r["isError"] != false {
		t.Fatalf("call: %v", r)
	}
	c := cc.last()
	if c.EntityID != "local:ws" || c.Claim != "claude-code" || c.ClaimKind != "cc" || c.AuthMethod != "spawn" {
		t.Errorf("caller = %+v, want entity local:ws with the claim claude-code recorded (lowering to cc)", c)
	}
	h.send(modernReq(`"c1"`, "tools/call", `"name":"block","arguments":{"tag":"m1"}`, ""))
	waitStarted(t, "m1")
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}`)
	h.send(modernReq("2", "tools/list", "", ""))
	if r := decode(t, h.recv()); string(r.ID) != "2" {
		t.Fatalf("cancelled call answered: %s", r.ID)
	}
	waitFor(t, func() bool { return cc.lastOutcome().Result == "cancelled" })
	// initialize afterwards still resolves the session's own caller.
	resultOf(t, h.initialize("2025-11-25"))
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	h.recv()
	if c := cc.last(); c.Claim != "test-client" || c.EntityID != "local:ws" {
		t.Errorf("legacy caller after modern calls = %+v", c)
	}
}

// subscriptions/listen: acknowledged first, then each list_changed tagged
// with the subscription id; a stream that neither initialized nor
// subscribed hears nothing; cancel stops it without an answer; the end of
// input ends it with the closing result.
func TestListenOnStream(t *testing.T) {
	srv := testServer(&testChain{})
	h := newHarness(t, srv)
	bystander := newHarness(t, srv)
	bystander.send(modernReq("1", "tools/list", "", ""))
	bystander.recv()

	h.send(modernReq(`"sub"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true,"promptsListChanged":true}`, ""))
	ack := h.recv()
	if !strings.HasPrefix(ack, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{`) ||
		!strings.Contains(ack, `"_meta":{"io.modelcontextprotocol/subscriptionId":"sub"}`) ||
		!strings.Contains(ack, `"notifications":{"toolsListChanged":true}`) {
		t.Fatalf("ack = %s", ack)
	}
	srv.NotifyToolsChanged()
	if n := h.recv(); n != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"sub"}}}` {
		t.Fatalf("notification = %s", n)
	}
	bystander.quiet(100 * time.Millisecond)

	// A second subscription on the same stream, then cancel the first.
	h.send(modernReq("7", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`, ""))
	if ack := h.recv(); !strings.Contains(ack, `subscriptionId":7}`) {
		t.Fatalf("second ack = %s", ack)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}`)
	waitFor(t, func() bool {
		srv.listenMu.Lock()
		defer srv.listenMu.Unlock()
		return len(srv.listeners) == 1
	})
	srv.NotifyToolsChanged()
	if n := h.recv(); !strings.Contains(n, `subscriptionId":7}`) {
		t.Fatalf("after cancel got %s", n)
	}
	h.quiet(50 * time.Millisecond)
	h.in.Close()
	if end := h.recv(); end != `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}` {
		t.Fatalf("closing result = %s", end)
	}
}

// Log messages reach a client only when its request asked for them (at or
// above its level); progress only with a progressToken; both before the
// answer; in both eras.
func TestReportsOnlyWhenAsked(t *testing.T) {
	h := newHarness(t, testServer(&testChain{}, reportTool()))
	call := func(id, extra string) []string {
		h.send(modernReq(id, "tools/call", `"name":"report","arguments":{}`, extra))
		notes, _ := h.recvUntil(id)
		return notes
	}
	if n := call("1", ""); len(n) != 0 {
		t.Errorf("nothing asked, got %v", n)
	}
	n := call("2", `"io.modelcontextprotocol/logLevel":"info"`)
	if len(n) != 1 || !strings.Contains(n[0], `"method":"notifications/message"`) || !strings.Contains(n[0], `"level":"info"`) {
		t.Errorf("logLevel info: %v", n)
	}
	if n := call("3", `"io.modelcontextprotocol/logLevel":"error"`); len(n) != 0 {
		t.Errorf("logLevel error: %v", n)
	}
	n = call("4", `"progressToken":"tok"`)
	if len(n) != 2 || n[0] != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2,"message":"half"}}` || !strings.Contains(n[1], `"progress":2`) {
		t.Errorf("progress: %v", n)
	}

	// Legacy: no log messages until logging/setLevel; progress with a token.
	resultOf(t, h.initialize("2025-11-25"))
	legacy := func(id, meta string) []string {
		p := `"name":"report","arguments":{}`
		if meta != "" {
			p += `,"_meta":` + meta
		}
		h.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + p + `}}`)
		notes, _ := h.recvUntil(id)
		return notes
	}
	if n := legacy("10", ""); len(n) != 0 {
		t.Errorf("legacy, nothing asked: %v", n)
	}
	if n := legacy("11", `{"progressToken":11}`); len(n) != 2 || !strings.Contains(n[0], `"progressToken":11`) {
		t.Errorf("legacy progress: %v", n)
	}
	h.send(`{"jsonrpc":"2.0","id":12,"method":"logging/setLevel","params":{"level":"debug"}}`)
	h.recv()
	if n := legacy("13", ""); len(n) != 2 || !strings.Contains(n[1], `"level":"debug"`) {
		t.Errorf("legacy after setLevel debug: %v", n)
	}
}

// The HTTP entry point: a stateless request without a session, its
// notifications through Notify, a listen ended by the client going away
// (no answer) or by EndSubscriptions (the closing result).
func TestHandleStateless(t *testing.T) {
	srv := testServer(&testChain{}, reportTool())
	var mu sync.Mutex
	var notes []string
	st := func() *Stateless {
		return &Stateless{Caller: chain.Caller{Transport: "http", AuthMethod: "bearer", Kind: "local", Subject: "ws"},
			ReplyToCancelled: true, Notify: func(b []byte) { mu.Lock(); notes = append(notes, string(b)); mu.Unlock() }}
	}
	msg := mustParse(t, modernReq("1", "tools/call", `"name":"report","arguments":{}`, `"progressToken":"p","io.modelcontextprotocol/logLevel":"debug"`))
	resp, err := srv.HandleStateless(context.Background(), st(), &msg)
	if err != nil || !strings.HasPrefix(string(resp), `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"`) {
		t.Fatalf("resp %s, %v", resp, err)
	}
	if len(notes) != 4 {
		t.Errorf("notifications = %v", notes)
	}
	note := mustParse(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if resp, err := srv.HandleStateless(context.Background(), st(), &note); resp != nil || err != nil {
		t.Errorf("notification answered: %s %v", resp, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	listen := mustParse(t, modernReq("2", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`, ""))
	got := make(chan []byte, 1)
	go func() { r, _ := srv.HandleStateless(ctx, st(), &listen); got <- r }()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(notes) == 5 })
	cancel()
	if r := <-got; r != nil {
		t.Errorf("cancelled listen answered %s", r)
	}
	go func() { r, _ := srv.HandleStateless(context.Background(), st(), &listen); got <- r }()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(notes) == 6 })
	srv.EndSubscriptions()
	if r := <-got; !strings.Contains(string(r), `"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2}`) {
		t.Errorf("ended listen answered %s", r)
	}
}

func TestHeaderValuesAndClaims(t *testing.T) {
	for _, c := range []struct {
		line, method, name string
		hasName            bool
		claim              string
		claimed            bool
	}{
		{modernReq("1", "tools/call", `"name":"read_file"`, ""), "tools/call", "read_file", true, "2026-07-28", true},
		{modernReq("1", "resources/read", `"uri":"file:///a"`, ""), "resources/read", "file:///a", true, "2026-07-28", true},
		{modernReq("1", "prompts/get", `"name":5`, ""), "prompts/get", "", true, "2026-07-28", true},
		{modernReq("1", "tools/list", "", ""), "tools/list", "", false, "2026-07-28", true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, "tools/list", "", false, "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9"}}}`, "tools/list", "", false, "v9", true},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "notifications/cancelled", "", false, "", false},
	} {
		msg := mustParse(t, c.line)
		m, n, has := HeaderValues(&msg)
		v, ok := ClaimedVersion(&msg)
		if m != c.method || n != c.name || has != c.hasName || v != c.claim || ok != c.claimed {
			t.Errorf("%s: got %q %q %v %q %v", c.line, m, n, has, v, ok)
		}
	}
}

// Open subscriptions are capped: a client opening them in a loop gets an
// error instead of all the memory; closing one makes room.
func TestListenersCapped(t *testing.T) {
	srv := testServer(&testChain{})
	st := &Stateless{Caller: chain.Caller{Transport: "http", AuthMethod: "bearer", Kind: "local", Subject: "ws"}, Notify: func([]byte) {}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < maxListeners; i++ {
		msg := mustParse(t, modernReq("1", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`, ""))
		wg.Add(1)
		go func() { defer wg.Done(); srv.HandleStateless(ctx, st, &msg) }()
	}
	waitFor(t, func() bool {
		srv.listenMu.Lock()
		defer srv.listenMu.Unlock()
		return len(srv.listeners) == maxListeners
	})
	msg := mustParse(t, modernReq("2", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`, ""))
	resp, _ := srv.HandleStateless(context.Background(), st, &msg)
	if !strings.Contains(string(resp), "too many open subscriptions") {
		t.Errorf("listen beyond the cap: %s", resp)
	}
	cancel()
	wg.Wait()
	if n := len(srv.listeners); n != 0 {
		t.Errorf("%d listeners left after their requests ended", n)
	}
}

// TestStreamListenersCapped: one stream connection holds at most
// maxStreamListeners subscriptions, so a daemon client cannot take all of
// the server's maxListeners from the others; cancelling one makes room,
// and another connection can subscribe meanwhile.
func TestStreamListenersCapped(t *testing.T) {
	srv := testServer(&testChain{})
	h := newHarness(t, srv)
	listen := func(h *harness, id int) string {
		h.send(modernReq(strconv.Itoa(id), "subscriptions/listen", `"notifications":{"toolsListChanged":true}`, ""))
		return h.recv()
	}
	for i := 1; i <= maxStreamListeners; i++ {
		if ack := listen(h, i); !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
			t.Fatalf("subscription %d: %s", i, ack)
		}
	}
	over := listen(h, 100)
	if !strings.Contains(over, `"id":100`) || !strings.Contains(over, "too many open subscriptions on this connection ("+strconv.Itoa(maxStreamListeners)+")") {
		t.Fatalf("subscription %d on one connection: %s, want the refusal naming the cap", maxStreamListeners+1, over)
	}
	if ack := listen(newHarness(t, srv), 1); !strings.Contains(ack, "acknowledged") {
		t.Fatalf("another connection's subscription: %s", ack)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	waitFor(t, func() bool {
		srv.listenMu.Lock()
		defer srv.listenMu.Unlock()
		return len(srv.listeners) == maxStreamListeners // 15 here, 1 on the other
	})
	var ack string
	waitFor(t, func() bool { ack = listen(h, 101); return strings.Contains(ack, "acknowledged") })
}

// TestModernRequestInBatchRefused: a request claiming 2026-07-28 inside a
// legacy batch is refused (-32600): batches are not part of that revision.
// Served, a subscriptions/listen there would hold the whole batch's answer
// until the input ended, could not be cancelled (a batch's members are not
// in the in-flight table) and would escape the per-connection cap of
// subscriptions.
func TestModernRequestInBatchRefused(t *testing.T) {
	srv := testServer(&testChain{})
	h := newHarness(t, srv)
	h.initialize("2025-03-26")
	h.send(`[` + modernReq("1", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`, "") + `,` +
		modernReq("2", "tools/call", `"name":"echo","arguments":{}`, "") + `,` +
		`{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	line := h.recv()
	var items []response
	if err := json.Unmarshal([]byte(line), &items); err != nil {
		t.Fatalf("batch answer %s: %v", line, err)
	}
	got := map[string]response{}
	for _, it := range items {
		got[string(it.ID)] = it
	}
	for _, id := range []string{"1", "2"} {
		if r := got[id]; r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(r.Error.Message, "batch") {
			t.Errorf("member %s claiming 2026-07-28: %s, want -32600 about batches", id, line)
		}
	}
	if r := got["3"]; r.Error != nil || string(r.Result) != "{}" {
		t.Errorf("legacy ping in the batch: %s", line)
	}
	srv.listenMu.Lock()
	n := len(srv.listeners)
	srv.listenMu.Unlock()
	if n != 0 {
		t.Errorf("%d subscriptions opened from a batch", n)
	}
}

// TestListenThenInputEnd: a subscriptions/listen followed at once by the
// end of the input (printf '...listen...' | clawd serve, or a socket
// client that half-closes after subscribing) is ended with its closing
// result, and the session ends. The input's end is then read while the
// subscription is still starting on its goroutine, before it has
// registered: the session's end of its subscriptions must reach it too,
// or it waits for a change forever and Serve never returns.
func TestListenThenInputEnd(t *testing.T) {
	for round := range 20 {
		srv := testServer(&testChain{})
		s := srv.NewSession(&chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "local", Subject: "ws"}, SessionOptions{})
		in := strings.NewReader(modernReq("1", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`, "") + "\n")
		out := &lockedBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.serveStream(ctx, in, out, nil) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("round %d: Serve = %v", round, err)
			}
		case <-time.After(5 * time.Second):
			cancel()
			<-done
			t.Fatalf("round %d: Serve still running 5 s after a listen and the input's end; wrote %s", round, out.String())
		}
		cancel()
		want := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`
		if !strings.Contains(out.String(), want) {
			t.Fatalf("round %d: wrote %s, want the closing result %s", round, out.String(), want)
		}
	}
}

// lockedBuffer is an io.Writer several goroutines may write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestModernExtensionSeesItsOwnClaim: an extension serving a request that
// claims 2026-07-28 on a stream sees that request's identity claim, caller
// and version, never those initialize set for the connection. clawd/api
// decides on s.Caller(): a claim ("opencode", lowering to oc) must lower
// what the request may do, for that request alone, as it does a modern
// tools/call; and a claim made at initialize must not stick to modern
// requests that claim something else.
func TestModernExtensionSeesItsOwnClaim(t *testing.T) {
	srv := testServer(&testChain{})
	srv.Extensions["clawd/who"] = func(ctx context.Context, s *Session, params jsontext.Value) (any, *jsonrpc.Error) {
		c := s.Caller()
		return map[string]string{"client": s.ClientName(), "claimKind": c.ClaimKind, "kind": c.Kind, "version": s.ProtocolVersion()}, nil
	}
	h := newHarness(t, srv)
	who := func(line string) map[string]any {
		t.Helper()
		h.send(line)
		return resultOf(t, h.recv())
	}
	want := func(got map[string]any, client, claimKind, version string) {
		t.Helper()
		if got["client"] != client || got["claimKind"] != claimKind || got["kind"] != "local" || got["version"] != version {
			t.Errorf("extension saw %v, want client %q, claim kind %q, kind local, version %q", got, client, claimKind, version)
		}
	}
	opencode := `"io.modelcontextprotocol/clientInfo":{"name":"opencode","version":"1"}`
	modern := func(id, client string) string {
		m := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` + client + `}`
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"clawd/who","params":{"_meta":` + m + `}}`
	}
	// Before initialize, and after an initialize claiming something else.
	want(who(modern("1", opencode)), "opencode", "oc", "2026-07-28")
	h.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"claude-code","version":"1"}}}`)
	resultOf(t, h.recv())
	want(who(modern("3", opencode)), "opencode", "oc", "2026-07-28")
	want(who(`{"jsonrpc":"2.0","id":4,"method":"clawd/who"}`), "claude-code", "cc", "2025-11-25")
	want(who(modern("5", `"io.modelcontextprotocol/clientInfo":{"name":"someone","version":"1"}`)), "someone", "", "2026-07-28")
}
