package transport

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
)

// revokedAuth knows one revoked per-client credential ("revoked"), one
// of another workspace ("elsewhere") and nothing else.
type revokedAuth struct{}

func (revokedAuth) Authenticate(tok string) (Identity, string, bool) {
	switch tok {
	case "revoked":
		return Identity{Kind: "cc", CredentialID: "0123456789abcdef"}, "credential_revoked", false
	case "elsewhere":
		return Identity{Kind: "oc", CredentialID: "fedcba9876543210"}, "credential_for_another_workspace", false
	}
	return Identity{}, "unknown_credential", false
}

// TestRefusedCredentialAudited: a request refused for a per-client
// credential whose secret matched (revoked, or of another workspace) is a
// Deny row at step auth, as a call of that credential on the socket is
// (docs/authorization.md); the transport refuses it before its body is
// read, so the row names the request. A token nobody issued leaves no row.
func TestRefusedCredentialAudited(t *testing.T) {
	audit := &chain.MemoryAudit{}
	f := startHTTP(t, func(h *HTTPServer) {
		h.Auth = revokedAuth{}
		h.Audit = audit
	})
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	for _, tt := range []struct {
		token, path, method string
		status              int
	}{
		{"revoked", PathMCP, http.MethodPost, AuthRefusedStatus},
		{"elsewhere", PathAPI + "v1/mcp/servers", http.MethodGet, http.StatusUnauthorized},
		{"nope", PathMCP, http.MethodPost, AuthRefusedStatus},
		{"", PathMCP, http.MethodPost, AuthRefusedStatus},
	} {
		hd := map[string]string{"Authorization": "Bearer " + tt.token, HeaderSessionID: "00000000000000000000000000000000"}
		body := call
		if tt.method == http.MethodGet {
			body = ""
		}
		if resp, b := f.do(req{method: tt.method, path: tt.path, body: body, headers: hd}); resp.StatusCode != tt.status {
			t.Fatalf("token %q: HTTP %d %s, want %d", tt.token, resp.StatusCode, b, tt.status)
		}
	}
	rows := audit.Rows()
	if len(rows) != 2 {
		t.Fatalf("%d audit rows, want 2 (the revoked and the other workspace's credential): %+v", len(rows), rows)
	}
	want := []chain.AuditRecord{
		{EntityID: "cc:ws-test", CredentialID: "0123456789abcdef", Reason: "credential_revoked", RequestID: "POST /mcp"},
		{EntityID: "oc:ws-test", CredentialID: "fedcba9876543210", Reason: "credential_for_another_workspace", RequestID: "GET /api/v1/mcp/servers"},
	}
	for i, r := range rows {
		w := want[i]
		if r.EntityID != w.EntityID || r.CredentialID != w.CredentialID || r.Reason != w.Reason || r.RequestID != w.RequestID ||
			r.Result != chain.ResultDeny || r.Step != chain.StepAuth || r.Transport != "http" || r.TrustLevel != chain.NoTrustLevel || r.Time.IsZero() {
			t.Errorf("row %d: %+v, want %+v, Deny at step auth over http", i, r, w)
		}
	}
}

// twoAuth accepts the test token (the workspace token, kind local) and
// one per-client credential of kind cc.
type twoAuth struct{}

func (twoAuth) Authenticate(tok string) (Identity, string, bool) {
	switch tok {
	case testToken:
		return Identity{Kind: "local"}, "", true
	case "cc-credential":
		return Identity{Kind: "cc", CredentialID: "00112233445566aa"}, "", true
	}
	return Identity{}, "unknown_credential", false
}

// TestSessionOfAnotherCredentialAudited: a request that names a session
// started with another credential passed authentication and is refused
// (403) before the chain sees it. It is a denial like any other, and the
// likeliest sign of a session id that leaked: a Deny row at step auth
// names the credential that presented it. Before, it left no row.
func TestSessionOfAnotherCredentialAudited(t *testing.T) {
	audit := &chain.MemoryAudit{}
	f := startHTTP(t, func(h *HTTPServer) {
		h.Auth = twoAuth{}
		h.Audit = audit
	})
	sid := f.initialize() // the workspace token's session
	other := map[string]string{"Authorization": "Bearer cc-credential", HeaderSessionID: sid}
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	if resp, b := f.do(req{body: call, headers: other}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("tools/call on another credential's session: HTTP %d %s, want 403", resp.StatusCode, b)
	}
	if resp, b := f.do(req{method: http.MethodDelete, headers: other}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("DELETE of another credential's session: HTTP %d %s, want 403", resp.StatusCode, b)
	}
	rows := audit.Rows()
	if len(rows) != 2 {
		t.Fatalf("%d audit rows, want 2: %+v", len(rows), rows)
	}
	for i, want := range []string{"POST /mcp", "DELETE /mcp"} {
		r := rows[i]
		if r.EntityID != "cc:ws-test" || r.CredentialID != "00112233445566aa" || r.Reason != "session_of_another_credential" ||
			r.RequestID != want || r.Result != chain.ResultDeny || r.Step != chain.StepAuth || r.Transport != "http" {
			t.Errorf("row %d: %+v, want a Deny at step auth of cc:ws-test for %s", i, r, want)
		}
	}
	// The session is its owner's still.
	if resp, b := f.do(req{body: call, headers: map[string]string{HeaderSessionID: sid}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("the owner's call: HTTP %d %s", resp.StatusCode, b)
	}
}

// TestSessionCapEvictsTheFloodersOwn: at the session cap the session that
// gives way is the least recently used one of the credential holding the
// most sessions. Before, it was the least recently used of all, so one
// credential that sent initialize in a loop evicted every other client's
// session within a cap's worth of requests, again and again: no other
// client could keep a session.
func TestSessionCapEvictsTheFloodersOwn(t *testing.T) {
	f := startHTTP(t, func(h *HTTPServer) {
		h.Auth = twoAuth{}
		h.MaxSessions = 4
	})
	mine := f.initialize() // the workspace token's, the oldest
	cc := map[string]string{"Authorization": "Bearer cc-credential"}
	for i := range 20 {
		if resp, b := f.do(req{body: initBody, headers: cc}); resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize %d with the cc credential: HTTP %d %s", i, resp.StatusCode, b)
		}
	}
	resp, b := f.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: map[string]string{HeaderSessionID: mine}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the workspace token's one session after another credential opened 20: HTTP %d %s, want 200", resp.StatusCode, b)
	}
	if n := f.h.sessions.len(); n != 4 {
		t.Errorf("%d sessions, want the cap (4)", n)
	}
}

// kindAuth maps the test token to whatever kind currently holds, as the
// daemon maps the workspace token to the live default_client_kind.
type kindAuth struct{ kind *atomic.Value }

func (a kindAuth) Authenticate(tok string) (Identity, string, bool) {
	if tok == testToken {
		return Identity{Kind: a.kind.Load().(string)}, "", true
	}
	return Identity{}, "invalid_token", false
}

// TestSessionEndsWhenItsCredentialsKindChanges: a session of the workspace
// token opened before default_client_kind changed is not another
// credential's: it ends (404, no audit row), so its client initializes
// again under the new kind, instead of 403 on every request for good.
func TestSessionEndsWhenItsCredentialsKindChanges(t *testing.T) {
	kind := &atomic.Value{}
	kind.Store("local")
	audit := &chain.MemoryAudit{}
	f := startHTTP(t, func(h *HTTPServer) {
		h.Auth = kindAuth{kind}
		h.Audit = audit
	})
	sid := f.initialize()
	kind.Store("oc")
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if resp, b := f.do(req{body: ping, headers: map[string]string{HeaderSessionID: sid}}); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("after the kind changed: HTTP %d %s, want 404", resp.StatusCode, b)
	}
	if n := f.h.sessions.len(); n != 0 {
		t.Errorf("%d sessions left, want the stale one gone", n)
	}
	if rows := audit.Rows(); len(rows) != 0 {
		t.Errorf("audit rows %+v, want none: the credential is the session's own", rows)
	}
	sid = f.initialize()
	f.h.sessions.mu.Lock()
	c := f.h.sessions.m[sid].s.Caller()
	f.h.sessions.mu.Unlock()
	if c.Kind != "oc" {
		t.Errorf("the new session's kind is %q, want oc", c.Kind)
	}
}

// flipAuth accepts the test token as a cc credential until revoked is set,
// then refuses it as revoked (its secret still matches).
type flipAuth struct{ revoked *atomic.Bool }

func (a flipAuth) Authenticate(tok string) (Identity, string, bool) {
	if tok != testToken {
		return Identity{}, "unknown_credential", false
	}
	id := Identity{Kind: "cc", CredentialID: "c0ffee00c0ffee00"}
	if a.revoked.Load() {
		return id, "credential_revoked", false
	}
	return id, "", true
}

// TestSubscriptionEndsWhenItsCredentialDoes: an HTTP subscription is one
// request that runs until its client ends it, so a credential revoked (or
// a workspace token rotated) after it was opened went on receiving its
// notifications for as long as the connection lived: "a leaked credential
// after clawd token revoke" kept a stream. The credential is checked
// again at each keep-alive; once refused, the subscription ends, and the
// refusal is audited as the credential's.
func TestSubscriptionEndsWhenItsCredentialDoes(t *testing.T) {
	revoked := &atomic.Bool{}
	audit := &chain.MemoryAudit{}
	f := startHTTP(t, func(h *HTTPServer) {
		h.Auth = flipAuth{revoked}
		h.Audit = audit
		h.timeouts.keepAlive = 20 * time.Millisecond
	})
	resp := f.post(t, body26(`"L"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`), h26("subscriptions/listen"))
	defer resp.Body.Close()
	ev := sseEvents(resp.Body)
	nextEvent(t, ev) // the acknowledgement
	// While the credential holds, keep-alives pass and notifications come.
	time.Sleep(100 * time.Millisecond)
	f.h.Server.NotifyToolsChanged()
	if e := nextEvent(t, ev); !strings.Contains(e, "notifications/tools/list_changed") {
		t.Fatalf("notification %s", e)
	}
	revoked.Store(true)
	select {
	case e, ok := <-ev:
		if ok {
			t.Fatalf("after the revocation the subscription got %s; want it ended", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription of a revoked credential is still open")
	}
	rows := audit.Rows()
	if len(rows) != 1 || rows[0].Reason != "credential_revoked" || rows[0].CredentialID != "c0ffee00c0ffee00" ||
		rows[0].Step != chain.StepAuth || rows[0].Result != chain.ResultDeny {
		t.Errorf("audit rows %+v, want one Deny at step auth for the revoked credential", rows)
	}
}
