package transport

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/tools"
)

// memAudit is an in-memory audit log: rows and their outcomes.
type memAudit = chain.MemoryAudit

// reportTool reports progress and an info log, then answers; "slow" (its
// tag argument) then blocks until cancelled.
type reportTool struct{ cancelled atomic.Int32 }

func (*reportTool) Spec() *tools.Spec {
	return &tools.Spec{Name: "report", Description: "Reports.", Permission: tools.PermRead,
		InputSchema: jsontext.Value(`{"type":"object"}`)}
}

func (t *reportTool) Call(ctx context.Context, args jsontext.Value) (any, error) {
	tools.ReportProgress(ctx, 1, 0, "started")
	tools.Log(ctx, "info", "report", "working")
	if strings.Contains(string(args), "slow") {
		<-ctx.Done()
		t.cancelled.Add(1)
		return nil, ctx.Err()
	}
	return map[string]any{"ok": true}, nil
}

// startModernHTTP is startHTTP with the report tool and an audit log.
func startModernHTTP(t *testing.T) (*httpFixture, *memAudit, *reportTool) {
	t.Helper()
	audit := &memAudit{}
	rt := &reportTool{}
	f := startHTTP(t, func(h *HTTPServer) {
		h.Server.Registry = tools.NewRegistry(&tools.StaticProvider{Name: "test", Source: tools.BuiltinOrigin(),
			List: []tools.Tool{rt, echoTool{}}})
		h.Server.Chain = &chain.Chain{Trust: chain.NewMemoryTrust(chain.DefaultTrustRows()...), Audit: audit}
	})
	return f, audit, rt
}

const meta26 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"opencode","version":"1"}}`

func body26(id, method, params string) string {
	p := meta26
	if params != "" {
		p = params + "," + meta26
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + p + `}}`
}

// h26 are the headers of a well-behaved 2026-07-28 client for method.
func h26(method string, more ...string) map[string]string {
	m := map[string]string{HeaderProtocolVersion: "2026-07-28", HeaderMethod: method}
	for i := 0; i+1 < len(more); i += 2 {
		m[more[i]] = more[i+1]
	}
	return m
}

// The stateless path's answers, and the order of its checks after
// clawd's own (Host, token, size come first).
func TestStatelessHTTPChecks(t *testing.T) {
	f, _, _ := startModernHTTP(t)
	list := body26("7", "tools/list", "")
	call := body26("8", "tools/call", `"name":"echo","arguments":{}`)
	b64 := "=?base64?" + base64.StdEncoding.EncodeToString([]byte("echo")) + "?="
	tests := []struct {
		name    string
		r       req
		status  int
		code    int // 0: a result
		mention string
	}{
		{"tools/list", req{body: list, headers: h26("tools/list")}, 200, 0, `"resultType":"complete"`},
		{"tools/call", req{body: call, headers: h26("tools/call", HeaderName, "echo")}, 200, 0, `"resultType":"complete"`},
		{"Mcp-Session-Id is ignored", req{body: list, headers: h26("tools/list", HeaderSessionID, "00000000000000000000000000000000")}, 200, 0, `"tools"`},
		{"Mcp-Name in Base64", req{body: call, headers: h26("tools/call", HeaderName, b64)}, 200, 0, `"isError":false`},
		{"Mcp-Name with whitespace around", req{body: call, headers: h26("tools/call", HeaderName, "  echo  ")}, 200, 0, `"isError":false`},
		{"Mcp-Method mismatch", req{body: list, headers: h26("prompts/list")}, 400, -32020, "Mcp-Method"},
		{"Mcp-Method missing", req{body: list, headers: map[string]string{HeaderProtocolVersion: "2026-07-28"}}, 400, -32020, "Mcp-Method"},
		{"Mcp-Method value case", req{body: list, headers: h26("TOOLS/LIST")}, 400, -32020, "Mcp-Method"},
		{"Mcp-Name mismatch", req{body: call, headers: h26("tools/call", HeaderName, "wrong_tool")}, 400, -32020, "Mcp-Name"},
		{"Mcp-Name missing", req{body: call, headers: h26("tools/call")}, 400, -32020, "Mcp-Name"},
		{"Mcp-Name bad Base64", req{body: call, headers: h26("tools/call", HeaderName, "=?base64?!!!?=")}, 400, -32020, "Mcp-Name"},
		{"version header missing", req{body: list, headers: map[string]string{HeaderMethod: "tools/list"}}, 400, -32020, "MCP-Protocol-Version"},
		{"version header differs from _meta", req{body: list, headers: h26("tools/list", HeaderProtocolVersion, "2025-11-25")}, 400, -32020, "MCP-Protocol-Version"},
		{"unsupported version", req{body: strings.ReplaceAll(list, "2026-07-28", "v999.0.0"), headers: h26("tools/list", HeaderProtocolVersion, "v999.0.0")}, 400, -32022, `"requested":"v999.0.0"`},
		{"claim differs from a modern header", req{body: strings.ReplaceAll(list, "2026-07-28", "v999.0.0"), headers: h26("tools/list")}, 400, -32020, "MCP-Protocol-Version"},
		{"modern header without _meta", req{body: `{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{}}`, headers: h26("server/discover")}, 400, -32602, "protocolVersion"},
		{"discover without any version", req{body: `{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{}}`}, 400, -32602, "protocolVersion"},
		{"no clientCapabilities", req{body: `{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, headers: h26("server/discover")}, 400, -32602, "clientCapabilities"},
		{"unknown method", req{body: body26("10", "nope/nope", ""), headers: h26("nope/nope")}, 404, -32601, "nope/nope"},
		{"initialize removed", req{body: body26("11", "initialize", `"protocolVersion":"2025-11-25","capabilities":{}`), headers: h26("initialize")}, 404, -32601, "initialize"},
		{"ping removed", req{body: body26("12", "ping", ""), headers: h26("ping")}, 404, -32601, "ping"},
		{"batch", req{body: "[" + list + "]", headers: h26("tools/list")}, 400, -32600, "batch"},
		{"token first", req{body: list, headers: h26("prompts/list", "-Authorization", "")}, 403, -32001, "unauthorized"},
		{"Host first", req{body: list, headers: h26("prompts/list", "Host", "evil.example:80")}, 403, -32600, "Host"},
		{"size first", req{body: `{"x":"` + strings.Repeat("a", 5<<20) + `"}`, headers: h26("prompts/list")}, 413, -32600, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(tt.r)
			if resp.StatusCode != tt.status {
				t.Fatalf("HTTP %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			if sid := resp.Header.Get(HeaderSessionID); sid != "" {
				t.Errorf("a stateless request got Mcp-Session-Id %q", sid)
			}
			r := decodeResp(t, body)
			switch {
			case tt.code == 0 && r.Error != nil:
				t.Errorf("error %s", body)
			case tt.code != 0 && (r.Error == nil || r.Error.Code != tt.code):
				t.Errorf("body %s, want code %d", body, tt.code)
			}
			if !strings.Contains(string(body), tt.mention) {
				t.Errorf("body %s does not mention %q", body, tt.mention)
			}
		})
	}
	if n := f.h.sessions.len(); n != 0 {
		t.Errorf("%d sessions after stateless requests, want 0", n)
	}
}

// A notification POST under 2026-07-28 is accepted with 202 and no body,
// also notifications/cancelled (closing a response cancels instead).
func TestStatelessNotification202(t *testing.T) {
	f, _, _ := startModernHTTP(t)
	resp, body := f.do(req{body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		headers: h26("notifications/cancelled")})
	if resp.StatusCode != 202 || len(body) != 0 {
		t.Fatalf("HTTP %d %q, want 202 and no body", resp.StatusCode, body)
	}
}

// Legacy sessions keep working on the same endpoint, beside stateless
// requests, and the two do not mix: only initialize mints a session.
func TestLegacySessionBesideStateless(t *testing.T) {
	f, audit, _ := startModernHTTP(t)
	sid := f.initialize()
	resp, body := f.do(req{body: body26("2", "tools/call", `"name":"echo","arguments":{}`), headers: h26("tools/call", HeaderName, "echo")})
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"resultType":"complete"`) {
		t.Fatalf("stateless call: %d %s", resp.StatusCode, body)
	}
	row, _ := audit.Last()
	if row.EntityID != "local:ws-test" || row.ClientClaim != "opencode" || row.Transport != "http" {
		t.Errorf("stateless audit row: entity %q claim %q transport %q", row.EntityID, row.ClientClaim, row.Transport)
	}
	resp, body = f.do(req{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		headers: map[string]string{HeaderSessionID: sid, HeaderProtocolVersion: "2025-11-25"}})
	if resp.StatusCode != 200 || strings.Contains(string(body), "resultType") || !strings.Contains(string(body), `"isError":false`) {
		t.Fatalf("legacy call in the session: %d %s", resp.StatusCode, body)
	}
	if row, _ := audit.Last(); row.ClientClaim != "test" {
		t.Errorf("legacy audit row claim %q", row.ClientClaim)
	}
	if n := f.h.sessions.len(); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
}

// sseEvents reads SSE "data:" payloads from r onto a channel.
func sseEvents(r io.Reader) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch
}

func nextEvent(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("the SSE stream ended")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no SSE event within 5 s")
		return ""
	}
}

// post sends a request and returns the open response (the caller closes it).
func (f *httpFixture) post(t *testing.T, body string, headers map[string]string) *http.Response {
	t.Helper()
	hr, _ := http.NewRequest(http.MethodPost, f.base+PathMCP, strings.NewReader(body))
	hr.Header.Set("Authorization", "Bearer "+testToken)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		hr.Header.Set(k, v)
	}
	resp, err := f.hc.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// A call that reports progress answers as an SSE stream of its own;
// closing that stream cancels the call: the tool's context ends and the
// audit row says cancelled.
func TestStatelessSSECancelOnClose(t *testing.T) {
	f, audit, rt := startModernHTTP(t)
	body := `{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"report","arguments":{"tag":"slow"},"_meta":{"progressToken":"pt","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	resp := f.post(t, body, h26("tools/call", HeaderName, "report"))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || resp.Header.Get(HeaderSessionID) != "" {
		t.Fatalf("Content-Type %q, session %q", ct, resp.Header.Get(HeaderSessionID))
	}
	ev := sseEvents(resp.Body)
	if e := nextEvent(t, ev); e != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"pt","progress":1,"message":"started"}}` {
		t.Fatalf("first event %s", e)
	}
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, outcome := audit.Last()
		if rt.cancelled.Load() == 1 && outcome == chain.OutcomeCancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing the stream: tool cancelled %d, audit outcome %q", rt.cancelled.Load(), outcome)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Log messages only when the request asked (logLevel), progress only with
// a token; a request that asked for neither is answered as plain JSON; a
// client that does not accept SSE gets the answer alone.
func TestStatelessReportsOnlyWhenAsked(t *testing.T) {
	f, _, _ := startModernHTTP(t)
	plain := body26("1", "tools/call", `"name":"report","arguments":{}`)
	resp, body := f.do(req{body: plain, headers: h26("tools/call", HeaderName, "report")})
	if resp.Header.Get("Content-Type") != "application/json" || strings.Contains(string(body), "notifications/") {
		t.Fatalf("nothing asked: %s %s", resp.Header.Get("Content-Type"), body)
	}
	logged := strings.Replace(plain, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"`, 1)
	r := f.post(t, logged, h26("tools/call", HeaderName, "report"))
	ev := sseEvents(r.Body)
	if e := nextEvent(t, ev); !strings.Contains(e, `"method":"notifications/message"`) || !strings.Contains(e, `"level":"info"`) {
		t.Errorf("first event %s", e)
	}
	if e := nextEvent(t, ev); !strings.HasPrefix(e, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"`) {
		t.Errorf("answer event %s", e)
	}
	r.Body.Close()
	resp, body = f.do(req{body: logged, headers: h26("tools/call", HeaderName, "report", "Accept", "application/json")})
	if resp.Header.Get("Content-Type") != "application/json" || strings.Contains(string(body), "notifications/") {
		t.Errorf("JSON-only client: %s %s", resp.Header.Get("Content-Type"), body)
	}
}

// subscriptions/listen over HTTP: an SSE stream acknowledged first, each
// list_changed tagged with the subscription id, and closing it ends it.
func TestStatelessListenHTTP(t *testing.T) {
	f, _, _ := startModernHTTP(t)
	resp := f.post(t, body26(`"L"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`), h26("subscriptions/listen"))
	ev := sseEvents(resp.Body)
	ack := nextEvent(t, ev)
	if !strings.Contains(ack, `"method":"notifications/subscriptions/acknowledged"`) || !strings.Contains(ack, `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("ack %s", ack)
	}
	f.h.Server.NotifyToolsChanged()
	if e := nextEvent(t, ev); e != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}` {
		t.Fatalf("notification %s", e)
	}
	resp.Body.Close()
}

// The official go-sdk client, left to choose, probes with server/discover
// and speaks 2026-07-28: no session, calls through the chain, and
// list_changed through its subscriptions/listen.
func TestGoSDKModernClient(t *testing.T) {
	f, audit, rt := startModernHTTP(t)
	changed := make(chan struct{}, 4)
	opts := &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }}
	cs, err := sdkConnectVersion(t, f, testToken, "", opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 2 || lt.Tools[0].Name != "echo" {
		t.Fatalf("tools/list: %v %+v", err, lt)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"x": 1}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call: %v %+v", err, res)
	}
	if row, outcome := audit.Last(); row.EntityID != "local:ws-test" || row.ClientClaim != "claude-code" || outcome != chain.OutcomeOK {
		t.Errorf("audit row entity %q claim %q outcome %q", row.EntityID, row.ClientClaim, outcome)
	}
	if n := f.h.sessions.len(); n != 0 {
		t.Errorf("%d sessions, want 0", n)
	}
	// The SDK opened a subscription at connect; a change reaches it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.h.Server.NotifyToolsChanged()
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no list_changed reached the SDK client")
			}
			continue
		}
		break
	}
	// Cancelling the call's context closes its request: the tool stops.
	cctx, ccancel := context.WithCancel(ctx)
	defer ccancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "report", Arguments: map[string]any{"tag": "slow"}})
		errc <- err
	}()
	for rt.cancelled.Load() == 0 {
		time.Sleep(20 * time.Millisecond)
		if _, o := audit.Last(); o == "" { // started, running
			ccancel()
		}
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatal("the SDK's cancellation did not reach the tool")
		}
	}
	if err := <-errc; err == nil {
		t.Error("a cancelled call returned no error")
	}
}

// A legacy session's call reports progress too: its POST's answer becomes
// an SSE stream when the client asked for progress; without a token it
// stays JSON.
func TestLegacySessionProgressOverSSE(t *testing.T) {
	f, _, _ := startModernHTTP(t)
	sid := f.initialize()
	hd := map[string]string{HeaderSessionID: sid, HeaderProtocolVersion: "2025-11-25"}
	resp := f.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"report","arguments":{},"_meta":{"progressToken":"lp"}}}`, hd)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	ev := sseEvents(resp.Body)
	if e := nextEvent(t, ev); !strings.Contains(e, `"progressToken":"lp"`) {
		t.Fatalf("first event %s", e)
	}
	if e := nextEvent(t, ev); !strings.HasPrefix(e, `{"jsonrpc":"2.0","id":2,"result":{"content"`) {
		t.Fatalf("answer %s", e)
	}
	r, body := f.do(req{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"report","arguments":{}}}`, headers: hd})
	if r.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), `"isError":false`) {
		t.Errorf("no token: %s %s", r.Header.Get("Content-Type"), body)
	}
}
