//go:build linux || darwin

package transport_e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// httpDaemon starts a loopback HTTP daemon and returns a raw client with
// its token.
func httpDaemon(t *testing.T, e *env) *clawdtest.HTTP {
	t.Helper()
	s, _ := httpDaemonProc(t, e)
	return s
}

// httpDaemonProc is httpDaemon that also returns the daemon's process.
func httpDaemonProc(t *testing.T, e *env) (*clawdtest.HTTP, *os.Process) {
	t.Helper()
	d, st := e.Daemon("tcp_loopback", "--port", "0")
	return clawdtest.NewHTTP(t, st.Addr, clawdtest.ReadToken(t, st.TokenFile)), d.Cmd.Process
}

// headers26 are the request metadata headers (streamable-http page,
// Request Metadata) that match a 2026-07-28 request for method (and name,
// for tools/call).
func headers26(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": v26, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// noSession fails the test if an answer minted a session id: the revision
// has none ("Removal of protocol-level sessions").
func noSession(t *testing.T, what string, r clawdtest.Reply) {
	t.Helper()
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("%s: clawd minted Mcp-Session-Id %q under 2026-07-28", what, id)
	}
}

// TestEraHTTPDiscoverAndLegacySession: server/discover and a legacy
// initialize on the same endpoint both succeed; the legacy session gets
// its Mcp-Session-Id and works; 2026-07-28 requests get none and work
// beside it (versioning page: a dual-era server "MAY serve both eras
// concurrently on the same endpoint").
func TestEraHTTPDiscoverAndLegacySession(t *testing.T) {
	s := httpDaemon(t, newEnv(t))
	r := s.Do(body26(1, "server/discover", nil), headers26("server/discover", ""))
	if r.Status != 200 {
		t.Fatalf("server/discover: HTTP %d %s", r.Status, r.Body)
	}
	noSession(t, "server/discover", r)
	checkDiscover(t, result(t, clawdtest.Decode(t, r.Body)))

	s.Initialize(initMsg)
	s.ProtocolVersion = "2025-11-25"
	if code, body := s.Post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != 202 {
		t.Fatalf("notifications/initialized: HTTP %d %s", code, body)
	}
	if code, body := s.Post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != 200 || !strings.Contains(body, `"read_file"`) {
		t.Fatalf("legacy tools/list on the session: HTTP %d %s", code, body)
	}
	r = s.Do(body26(3, "tools/call", map[string]any{"name": "read_file", "arguments": map[string]any{"path": "a.txt"}}), headers26("tools/call", "read_file"))
	if r.Status != 200 {
		t.Fatalf("2026-07-28 tools/call beside the legacy session: HTTP %d %s", r.Status, r.Body)
	}
	noSession(t, "tools/call", r)
	if res := result(t, clawdtest.Decode(t, r.Body)); res["resultType"] != "complete" || res["isError"] != false {
		t.Errorf("2026-07-28 read_file: %s", r.Body)
	}
}

// TestEraHTTPHeaders is the streamable-http page's Server Validation and
// Protocol Version Header rules, row by row: a missing or mismatched
// MCP-Protocol-Version, Mcp-Method or Mcp-Name is 400 with -32020
// (HeaderMismatch), an encoded Mcp-Name is decoded before the comparison,
// an unsupported version is 400 with -32022, an unimplemented (or removed)
// method is 404 with -32601, a claim without clientCapabilities is 400
// with -32602. Every error names the request's id; no answer mints a
// session. The token, Origin and size checks come before any of this.
func TestEraHTTPHeaders(t *testing.T) {
	e := newEnv(t)
	s := httpDaemon(t, e)
	read := func(id int) string {
		return body26(id, "tools/call", map[string]any{"name": "read_file", "arguments": map[string]any{"path": "a.txt"}})
	}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{}
		for a, b := range h {
			out[a] = b
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	ok := headers26("tools/call", "read_file")
	old := strings.Replace(body26(30, "tools/list", nil), v26, "1900-01-01", 1)
	noCaps := strings.Replace(body26(31, "tools/list", nil), `"io.modelcontextprotocol/clientCapabilities":{},`, "", 1)
	for _, tt := range []struct {
		name   string
		body   string
		header map[string]string
		status int
		code   int // 0: a result
	}{
		{"all headers match", read(10), ok, 200, 0},
		{"Mcp-Name base64-encoded", read(11), with(ok, "Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("read_file"))+"?="), 200, 0},
		{"MCP-Protocol-Version missing", read(12), with(ok, "MCP-Protocol-Version", ""), 400, -32020},
		{"MCP-Protocol-Version differs from the body", read(13), with(ok, "MCP-Protocol-Version", "2025-11-25"), 400, -32020},
		{"Mcp-Method missing", read(14), with(ok, "Mcp-Method", ""), 400, -32020},
		{"Mcp-Method differs", read(15), with(ok, "Mcp-Method", "tools/list"), 400, -32020},
		{"Mcp-Method differs by case only", read(16), with(ok, "Mcp-Method", "Tools/call"), 400, -32020},
		{"Mcp-Name missing on tools/call", read(17), with(ok, "Mcp-Name", ""), 400, -32020},
		{"Mcp-Name names another tool", read(18), with(ok, "Mcp-Name", "write_file"), 400, -32020},
		{"Mcp-Name encoded, another tool", read(19), with(ok, "Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("bash"))+"?="), 400, -32020},
		{"Mcp-Name bad base64", read(20), with(ok, "Mcp-Name", "=?base64?!!!?="), 400, -32020},
		{"unsupported version", old, map[string]string{"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "tools/list"}, 400, -32022},
		{"clientCapabilities missing", noCaps, headers26("tools/list", ""), 400, -32602},
		{"unknown method", body26(32, "clawd/nonesuch", nil), headers26("clawd/nonesuch", ""), 404, -32601},
		{"ping (removed)", body26(33, "ping", nil), headers26("ping", ""), 404, -32601},
		{"initialize claiming 2026-07-28 (removed)", body26(34, "initialize", map[string]any{"protocolVersion": "2025-11-25",
			"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw-wire", "version": "1"}}), headers26("initialize", ""), 404, -32601},
		{"logging/setLevel (removed)", body26(35, "logging/setLevel", map[string]any{"level": "info"}), headers26("logging/setLevel", ""), 404, -32601},
		{"resources/subscribe (removed)", body26(36, "resources/subscribe", map[string]any{"uri": "file:///a.txt"}), headers26("resources/subscribe", ""), 404, -32601},
		// "An Mcp-Session-Id header on a request: ignore it" (Earlier
		// Streamable HTTP Revisions): no session is looked up for 2026-07-28.
		{"unknown Mcp-Session-Id is ignored", read(21), with(ok, "Mcp-Session-Id", "0123456789abcdef0123456789abcdef"), 200, 0},
		// clawd's own checks come first: a foreign Origin, or a body over
		// max_message_bytes, is refused as such whatever the MCP headers say.
		{"foreign Origin before the header rules", read(22), with(with(ok, "Mcp-Name", "write_file"), "Origin", "http://evil.example.com"), 403, 0},
		{"oversized body before the header rules", body26(23, "tools/call", map[string]any{"name": "read_file",
			"arguments": map[string]any{"path": strings.Repeat("a", 5<<20)}}), with(ok, "Mcp-Name", "write_file"), 413, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(tt.body, tt.header)
			noSession(t, tt.name, r)
			if r.Status != tt.status {
				t.Fatalf("HTTP %d %s, want %d", r.Status, r.Body, tt.status)
			}
			if tt.code == 0 && tt.status != 200 {
				if strings.Contains(r.Body, "-32020") {
					t.Errorf("refused for its headers, not by clawd's own check first: %s", r.Body)
				}
				return
			}
			if tt.code == 0 {
				if res := result(t, clawdtest.Decode(t, r.Body)); res["resultType"] != "complete" {
					t.Errorf("result without resultType complete: %s", r.Body)
				}
				return
			}
			code, data, id := errOf(t, r.Body)
			if code != tt.code {
				t.Errorf("code %d, want %d: %s", code, tt.code, r.Body)
			}
			if want := object(t, tt.body)["id"]; id != want {
				t.Errorf("error id %v, want the request's %v: %s", id, want, r.Body)
			}
			if tt.code == -32022 {
				checkUnsupported(t, r.Body, "1900-01-01")
			}
			_ = data
		})
	}
	// Authentication comes first: a wrong token with mismatched headers is
	// refused as unauthorized, and reveals nothing of the header rules.
	bad := clawdtest.NewHTTP(t, strings.TrimPrefix(s.Base, "http://"), strings.Repeat("0", 64))
	if r := bad.Do(read(40), with(ok, "Mcp-Name", "write_file")); r.Status != 403 || !strings.Contains(r.Body, "-32001") {
		t.Errorf("wrong token and a header mismatch: HTTP %d %s, want 403 -32001", r.Status, r.Body)
	}
}

// TestEraHTTPNotification: a notification POST is answered 202 with no
// body (streamable-http page, Sending Messages 5), without a session.
func TestEraHTTPNotification(t *testing.T) {
	s := httpDaemon(t, newEnv(t))
	r := s.Do(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nothing-running"}}`,
		map[string]string{"MCP-Protocol-Version": v26, "Mcp-Method": "notifications/cancelled"})
	if r.Status != 202 || r.Body != "" {
		t.Errorf("notification: HTTP %d %q, want 202 and no body", r.Status, r.Body)
	}
	noSession(t, "notification", r)
}

// sseEvents reads a text/event-stream body and sends each event's data.
func sseEvents(resp *http.Response) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		var data []string
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			if line == "" {
				if len(data) > 0 {
					ch <- strings.Join(data, "\n")
				}
				data = nil
				continue
			}
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
	}()
	return ch
}

// nextEvent is the next event's data within d ("" and false on timeout or
// the end of the stream).
func nextEvent(ch <-chan string, d time.Duration) (string, bool) {
	select {
	case s, ok := <-ch:
		return s, ok
	case <-time.After(d):
		return "", false
	}
}

// TestEraHTTPSubscription: subscriptions/listen answers with an SSE stream
// that stays open; its first event is the acknowledgement tagged with the
// request id; a change then arrives on it, tagged the same; no session;
// when the daemon shuts down, the stream ends with the listen request's
// result.
func TestEraHTTPSubscription(t *testing.T) {
	e := newEnv(t)
	s, proc := httpDaemonProc(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := s.Open(ctx, mustJSON(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
		"params": params26(map[string]any{"notifications": map[string]any{"toolsListChanged": true}})}), headers26("subscriptions/listen", ""))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("subscriptions/listen: HTTP %d %s, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("subscriptions/listen minted session id %q", id)
	}
	events := sseEvents(resp)
	first, ok := nextEvent(events, 10*time.Second)
	if !ok {
		t.Fatal("no first event on the subscription stream")
	}
	if m := object(t, first); m["method"] != "notifications/subscriptions/acknowledged" || metaOf(t, first, "io.modelcontextprotocol/subscriptionId") != "9" {
		t.Fatalf("first event %s, want the acknowledgement tagged with subscription 9", first)
	}
	reconfigure(t, e, proc, "[tools]\nread_file = false\n")
	for {
		ev, ok := nextEvent(events, 20*time.Second)
		if !ok {
			t.Fatal("no list_changed on the stream within 20 s of a config change")
		}
		m := object(t, ev)
		if m["method"] == "notifications/tools/list_changed" {
			if id := metaOf(t, ev, "io.modelcontextprotocol/subscriptionId"); id != "9" {
				t.Errorf("list_changed tagged %s, want 9: %s", id, ev)
			}
			break
		}
		if _, isResponse := m["id"]; isResponse {
			t.Fatalf("the subscription ended on its own: %s", ev)
		}
	}
	// Graceful closure (patterns/subscriptions): a server ending the
	// subscription itself, here by shutting down, SHOULD answer the
	// listen request with a complete result tagged with its id.
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for {
		ev, ok := nextEvent(events, 10*time.Second)
		if !ok {
			t.Fatal("the stream closed on shutdown without a response to subscriptions/listen")
		}
		m := object(t, ev)
		if _, isResponse := m["id"]; !isResponse {
			continue
		}
		res, _ := m["result"].(map[string]any)
		meta, _ := res["_meta"].(map[string]any)
		if m["id"] != float64(9) || res["resultType"] != "complete" || meta["io.modelcontextprotocol/subscriptionId"] != float64(9) {
			t.Errorf("closing response %s, want id 9, resultType complete, _meta subscriptionId 9", ev)
		}
		return
	}
}

// TestEraHTTPCancelByClosing (patterns/cancellation): on Streamable HTTP,
// closing the request's response is the cancellation; the long bash call
// behind it must die.
func TestEraHTTPCancelByClosing(t *testing.T) {
	e := newEnv(t)
	s := httpDaemon(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.Base+"/mcp", strings.NewReader(body26(5, "tools/call",
			map[string]any{"name": "bash", "arguments": map[string]any{"command": bashPIDs, "timeout_ms": 120000}})))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+s.Token)
		for k, v := range headers26("tools/call", "bash") {
			req.Header.Set(k, v)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			// An SSE answer starts before the result; reading blocks until
			// the cancel closes it.
			bufio.NewReader(resp.Body).ReadString(0)
			resp.Body.Close()
		}
	}()
	sh, child := readPIDs(t, e.WS)
	cancel()
	<-done
	waitDead(t, "after the client closed the request", sh, child)
}

// TestEraIdentityComesFromCredential is TestIdentityComesFromCredential
// for 2026-07-28 requests: over the socket and HTTP, with each credential,
// a request whose _meta clientInfo claims a name gets exactly the level
// its credential allows, lowered by a claim of a lower kind and never
// raised; tools/list follows that level (so it varies by caller, and says
// cacheScope private); the audit row names the credential's entity and
// keeps the claim.
func TestEraIdentityComesFromCredential(t *testing.T) {
	e := newIdentityEnv(t)
	type want struct {
		kind, claim string
		level       int
	}
	wants := map[string]want{}
	n := 0
	for _, transport := range []string{"unix", "http"} {
		for _, credKind := range []string{"", "cc", "oc", "local"} {
			for _, claim := range []string{"claude-code", "opencode", "local", ""} {
				n++
				reqID := fmt.Sprintf("era-%s-%s-%d", transport, credKind, n)
				kind := credKind
				if kind == "" {
					kind = "local"
				}
				level := kindLevels[kind]
				if ck := claimKind(claim); ck != "" {
					level = min(level, kindLevels[ck])
				}
				p := func(params map[string]any) map[string]any {
					out := params26(params)
					meta := out["_meta"].(map[string]any)
					if claim == "" {
						delete(meta, "io.modelcontextprotocol/clientInfo")
					} else {
						meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": claim, "version": "1"}
					}
					return out
				}
				call := mustJSON(map[string]any{"jsonrpc": "2.0", "id": reqID, "method": "tools/call",
					"params": p(map[string]any{"name": "read_file", "arguments": map[string]any{"path": "a.txt"}})})
				list := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": p(nil)})
				var callBody, listBody string
				switch transport {
				case "unix":
					l := e.socketAs(t, credKind)
					callBody, listBody = l.Call(call), l.Call(list)
					l.Close()
				case "http":
					s := e.httpAs(t, credKind)
					callBody = s.Do(call, headers26("tools/call", "read_file")).Body
					listBody = s.Do(list, headers26("tools/list", "")).Body
				}
				if !strings.Contains(callBody, `"isError":false`) {
					t.Errorf("%s claiming %q: read_file: %s", reqID, claim, callBody)
				}
				res := object(t, listBody)["result"].(map[string]any)
				if got := len(toolNames26(t, res)); got != visibleAt(level) || res["cacheScope"] != "private" {
					t.Errorf("%s (credential %q) claiming %q: tools/list shows %d tools (cacheScope %v), want %d (level %d), private",
						transport, credKind, claim, got, res["cacheScope"], visibleAt(level), level)
				}
				wants[reqID] = want{kind: kind, claim: claim, level: level}
			}
		}
	}
	rows := e.auditByRequest(t)
	for reqID, w := range wants {
		checkIdentityRow(t, rows, reqID, w.kind, w.claim, w.level)
	}
}

// TestEraHTTPProgress: over HTTP under 2026-07-28, a bash call with a
// progressToken is answered as an SSE stream of that request alone
// (streamable-http, Receiving Messages): progress notifications naming the
// token, increasing, then the answer as the last event; no session.
func TestEraHTTPProgress(t *testing.T) {
	s := httpDaemon(t, newEnv(t))
	p := params26(map[string]any{"name": "bash", "arguments": map[string]any{"command": "sleep 2.3", "timeout_ms": 60000}})
	p["_meta"].(map[string]any)["progressToken"] = 77
	resp := s.Open(context.Background(), mustJSON(map[string]any{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": p}), headers26("tools/call", "bash"))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("HTTP %d %s, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("session id %q minted", id)
	}
	var progress []map[string]any
	var answer map[string]any
	for ev := range sseEvents(resp) {
		if answer != nil {
			t.Errorf("event after the answer: %s", ev)
		}
		m := object(t, ev)
		if m["method"] == "notifications/progress" {
			pp, _ := m["params"].(map[string]any)
			progress = append(progress, pp)
			continue
		}
		answer = m
	}
	if answer == nil || answer["id"] != float64(8) || answer["result"] == nil {
		t.Fatalf("the stream ended without the answer to 8 (got %v)", answer)
	}
	checkProgress(t, progress, "77")
}
