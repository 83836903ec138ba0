//go:build linux || darwin

package transport_e2e

import (
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/test/clawdtest"
)

// The entity kind of a socket or HTTP connection comes from the credential
// it presents; what the client calls itself (clientInfo.name) is recorded
// as a claim and can only lower its trust. These tests drive the built
// binary over both transports.

// kindLevels gives each kind its own trust level, so the level the chain
// applied shows which rows it used.
var kindLevels = map[string]int{"local": 1, "oc": 2, "cc": 3}

// claimKind is the kind a clientInfo.name claims (only exact known names).
func claimKind(name string) string {
	switch name {
	case "claude-code":
		return "cc"
	case "opencode":
		return "oc"
	}
	return ""
}

// identityEnv is a workspace with a unix-socket and a loopback-HTTP daemon,
// distinct trust levels per kind and one per-client credential per kind.
type identityEnv struct {
	*env
	sock, addr, wsToken string
	creds               map[string]string // kind -> credential text
}

func newIdentityEnv(t *testing.T) *identityEnv {
	e := &identityEnv{env: newEnv(t), creds: map[string]string{}}
	for kind, level := range kindLevels {
		if _, errOut, code := e.Run("trust", "set", kind+":*", fmt.Sprint(level)); code != 0 {
			t.Fatalf("trust set %s: %s", kind, errOut)
		}
	}
	for kind := range kindLevels {
		out, errOut, code := e.Run("token", "issue", "--client", kind, "--label", "test "+kind)
		if code != 0 || !strings.HasPrefix(out, "cdc1_") {
			t.Fatalf("token issue --client %s: exit %d %q %s", kind, code, out, errOut)
		}
		e.creds[kind] = strings.TrimSpace(out)
	}
	e.serve("--transport", "unix_socket")
	e.serve("--transport", "tcp_loopback", "--port", "0")
	e.sock = e.State("unix").Socket
	st := e.State("tcp")
	e.addr = st.Addr
	e.wsToken = clawdtest.ReadToken(t, st.TokenFile)
	return e
}

func initWithClaim(claim string) string {
	name, _ := json.Marshal(claim)
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":` + string(name) + `,"version":"1"}}}`
}

func readCall(reqID string) string {
	return `{"jsonrpc":"2.0","id":"` + reqID + `","method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`
}

const toolsListMsg = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`

// toolCount counts the tools in a tools/list answer.
func toolCount(t *testing.T, body string) int {
	t.Helper()
	var r struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &r, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("tools/list answer %s: %v", body, err)
	}
	return len(r.Result.Tools)
}

// visibleAt is how many built-in tools a level sees (read tools at 1,
// write and execute from 2).
func visibleAt(level int) int {
	if level >= 2 {
		return 5
	}
	return 3
}

// auditRow is what these tests read back from `clawd audit --json`.
type auditRow struct {
	EntityID     string  `json:"entity_id"`
	TrustLevel   *int    `json:"trust_level"`
	Result       string  `json:"result"`
	Reason       string  `json:"reason"`
	Step         string  `json:"step"`
	Transport    string  `json:"transport"`
	RequestID    string  `json:"request_id"`
	ClientClaim  *string `json:"client_claim"`
	CredentialID *string `json:"credential_id"`
}

// socketAs connects to the unix socket and, unless credKind is "",
// presents that kind's credential with clawd/authenticate.
func (e *identityEnv) socketAs(t *testing.T, credKind string) *clawdtest.Client {
	t.Helper()
	l := clawdtest.DialUnix(t, e.sock)
	if credKind != "" {
		got := l.Call(`{"jsonrpc":"2.0","id":0,"method":"clawd/authenticate","params":{"credential":"` + e.creds[credKind] + `"}}`)
		if !strings.Contains(got, `"kind":"`+credKind+`"`) {
			t.Fatalf("clawd/authenticate with the %s credential: %s", credKind, got)
		}
	}
	return l
}

// httpAs is an HTTP client with credKind's credential as its bearer, or
// the workspace token when credKind is "".
func (e *identityEnv) httpAs(t *testing.T, credKind string) *clawdtest.HTTP {
	t.Helper()
	tok := e.wsToken
	if credKind != "" {
		tok = e.creds[credKind]
	}
	return clawdtest.NewHTTP(t, e.addr, tok)
}

// checkIdentityRow checks the audit row of one request: its entity has the
// credential's kind, its trust level is want's, and the client's claim is
// recorded. It reports false when the request has no row.
func checkIdentityRow(t *testing.T, rows map[string]auditRow, reqID, kind, claim string, level int) (auditRow, bool) {
	t.Helper()
	r, ok := rows[reqID]
	if !ok {
		t.Errorf("%s: no audit row", reqID)
		return r, false
	}
	if !strings.HasPrefix(r.EntityID, kind+":") {
		t.Errorf("%s claiming %q: entity %s, want kind %s (the credential's)", reqID, claim, r.EntityID, kind)
	}
	if r.TrustLevel == nil || *r.TrustLevel != level {
		t.Errorf("%s claiming %q: trust_level %v, want %d", reqID, claim, r.TrustLevel, level)
	}
	if claim != "" && (r.ClientClaim == nil || *r.ClientClaim != claim) {
		t.Errorf("%s: client_claim %v, want %q", reqID, r.ClientClaim, claim)
	}
	return r, true
}

func (e *identityEnv) auditByRequest(t *testing.T) map[string]auditRow {
	t.Helper()
	out, errOut, code := e.Run("audit", "--json", "--limit", "0")
	if code != 0 {
		t.Fatalf("clawd audit: %s", errOut)
	}
	var rows []auditRow
	if err := json.Unmarshal([]byte(out), &rows, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("audit JSON: %v", err)
	}
	m := map[string]auditRow{}
	for _, r := range rows {
		m[strings.Trim(r.RequestID, `"`)] = r
	}
	return m
}

// TestIdentityComesFromCredential: over the socket and HTTP, a client
// claiming every known name (and some near misses) with each credential
// gets exactly the level its credential allows, lowered by a claim of a
// lower kind, never raised.
func TestIdentityComesFromCredential(t *testing.T) {
	e := newIdentityEnv(t)
	claims := []string{"claude-code", "opencode", "local", "clawd-cli", "", "Claude-Code", "claude-code ", "cc", "device"}
	type want struct {
		kind, claim, cred string
		level             int
	}
	wants := map[string]want{}
	n := 0
	for _, transport := range []string{"unix", "http"} {
		for _, credKind := range []string{"", "cc", "oc", "local"} {
			for _, claim := range claims {
				n++
				reqID := fmt.Sprintf("%s-%s-%d", transport, credKind, n)
				kind := credKind
				if kind == "" {
					kind = "local" // default_client_kind
				}
				level := kindLevels[kind]
				if ck := claimKind(claim); ck != "" {
					level = min(level, kindLevels[ck])
				}
				var callBody, listBody string
				switch transport {
				case "unix":
					l := e.socketAs(t, credKind)
					l.Call(initWithClaim(claim))
					callBody = l.Call(readCall(reqID))
					listBody = l.Call(toolsListMsg)
					l.Close()
				case "http":
					s := e.httpAs(t, credKind)
					if code, body := s.Post(initWithClaim(claim)); code != 200 {
						t.Fatalf("%s: initialize: HTTP %d %s", reqID, code, body)
					}
					_, callBody = s.Post(readCall(reqID))
					_, listBody = s.Post(toolsListMsg)
				}
				if !strings.Contains(callBody, `"isError":false`) {
					t.Errorf("%s claiming %q: read_file: %s", reqID, claim, callBody)
				}
				if got := toolCount(t, listBody); got != visibleAt(level) {
					t.Errorf("%s (credential %q) claiming %q: tools/list shows %d tools, want %d (level %d)", transport, credKind, claim, got, visibleAt(level), level)
				}
				wants[reqID] = want{kind: kind, claim: claim, cred: credKind, level: level}
			}
		}
	}
	rows := e.auditByRequest(t)
	for reqID, w := range wants {
		r, ok := checkIdentityRow(t, rows, reqID, w.kind, w.claim, w.level)
		if !ok {
			continue
		}
		if (w.cred != "") != (r.CredentialID != nil) {
			t.Errorf("%s: credential_id %v with credential %q", reqID, r.CredentialID, w.cred)
		}
	}
}

// TestRevokedCredentialRefusedAtOnce: revoking a credential refuses it on
// the next request, also on a socket connection and an HTTP session it
// opened before, and on clawd connect.
func TestRevokedCredentialRefusedAtOnce(t *testing.T) {
	e := newIdentityEnv(t)
	// clawd connect --client cc presents the saved credential.
	out, errOut, code := e.RunStdin(initWithClaim("some-host")+"\n"+readCall("connect-1")+"\n", "connect", "--client", "cc")
	if code != 0 || !strings.Contains(out, `"isError":false`) || strings.Contains(out, "clawd-connect-authenticate") {
		t.Fatalf("clawd connect --client cc: exit %d %s %s", code, out, errOut)
	}
	if r := e.auditByRequest(t)["connect-1"]; !strings.HasPrefix(r.EntityID, "cc:") || r.CredentialID == nil {
		t.Fatalf("clawd connect --client cc: audit row %+v, want entity cc:... with its credential", r)
	}

	l := clawdtest.DialUnix(t, e.sock)
	l.Call(`{"jsonrpc":"2.0","id":0,"method":"clawd/authenticate","params":{"credential":"` + e.creds["cc"] + `"}}`)
	l.Call(initWithClaim("claude-code"))
	if got := l.Call(readCall("before-1")); !strings.Contains(got, `"isError":false`) {
		t.Fatalf("call before revoking: %s", got)
	}
	s := clawdtest.NewHTTP(t, e.addr, e.creds["cc"])
	s.Initialize(initMsg)
	if _, got := s.Post(readCall("before-2")); !strings.Contains(got, `"isError":false`) {
		t.Fatalf("HTTP call before revoking: %s", got)
	}

	id := strings.SplitN(strings.TrimPrefix(e.creds["cc"], "cdc1_"), "_", 2)[0]
	if out, errOut, code := e.Run("token", "revoke", id); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("token revoke: exit %d %s %s", code, out, errOut)
	}
	// The daemon's poll of the trust registry also sends
	// notifications/tools/list_changed within a second of the revoke, in
	// between these answers or not: wait for each answer by its id.
	l.SendLine(readCall("after-1"))
	if got := l.Await(`"after-1"`).Raw; !strings.Contains(got, `"code":-32001`) || !strings.Contains(got, "credential_revoked") {
		t.Errorf("socket call after revoking: %s, want -32001 credential_revoked", got)
	}
	l.SendLine(toolsListMsg)
	if got := l.Await(`3`).Raw; toolCount(t, got) != 0 {
		t.Errorf("tools/list after revoking: %s, want no tools", got)
	}
	code, body := s.Post(readCall("after-2"))
	if code != http.StatusForbidden || !strings.Contains(body, "credential_revoked") {
		t.Errorf("HTTP call after revoking: HTTP %d %s, want 403 credential_revoked", code, body)
	}
	l2 := clawdtest.DialUnix(t, e.sock)
	if got := l2.Call(`{"jsonrpc":"2.0","id":0,"method":"clawd/authenticate","params":{"credential":"` + e.creds["cc"] + `"}}`); !strings.Contains(got, `"code":-32001`) {
		t.Errorf("authenticating with a revoked credential: %s", got)
	}
	if _, errOut, code := e.RunStdin(initWithClaim("x")+"\n", "connect", "--client", "cc"); code != 1 || !strings.Contains(errOut, "credential") {
		t.Errorf("clawd connect --client cc after revoking: exit %d %s", code, errOut)
	}
	// The refused socket call is on record as a denial at step auth.
	rows := e.auditByRequest(t)
	if r := rows["after-1"]; r.Result != "Deny" || r.Step != "auth" || r.Reason != "credential_revoked" {
		t.Errorf("audit row of the refused call: %+v", r)
	}
	// So is the refused HTTP request, as the credential's; the transport
	// refuses it before reading its body, so the row names the request.
	if r := rows["POST /mcp"]; r.Result != "Deny" || r.Step != "auth" || r.Reason != "credential_revoked" ||
		r.Transport != "http" || !strings.HasPrefix(r.EntityID, "cc:") || r.CredentialID == nil || *r.CredentialID != id {
		t.Errorf("audit row of the refused HTTP request: %+v", r)
	}
	// Other credentials are unaffected.
	s2 := clawdtest.NewHTTP(t, e.addr, e.creds["oc"])
	s2.Initialize(initMsg)
	if _, got := s2.Post(readCall("other")); !strings.Contains(got, `"isError":false`) {
		t.Errorf("another credential after revoking one: %s", got)
	}
}

// TestHTTPSessionBoundToItsCredential: an Mcp-Session-Id routes requests;
// it does not authenticate them. Another valid credential cannot use it.
func TestHTTPSessionBoundToItsCredential(t *testing.T) {
	e := newIdentityEnv(t)
	s := clawdtest.NewHTTP(t, e.addr, e.creds["cc"])
	s.Initialize(initMsg)
	other := clawdtest.NewHTTP(t, e.addr, e.wsToken)
	other.SessionID = s.SessionID
	if code, body := other.Post(readCall("hijack")); code != http.StatusForbidden {
		t.Errorf("the workspace token on a cc credential's session: HTTP %d %s, want 403", code, body)
	}
	if code, body := s.Post(readCall("own")); code != 200 || !strings.Contains(body, `"isError":false`) {
		t.Errorf("the session's own credential: HTTP %d %s", code, body)
	}
}

// TestCredentialCLI: issue refuses bad kinds (exit 2), list never shows
// secrets, revoke of an unknown id fails clearly.
func TestCredentialCLI(t *testing.T) {
	e := newEnv(t)
	if _, errOut, code := e.Run("token", "issue", "--client", "device"); code != 2 || !strings.Contains(errOut, "cc, oc, local") {
		t.Errorf("issue --client device: exit %d %s", code, errOut)
	}
	if _, errOut, code := e.Run("token", "issue"); code != 2 {
		t.Errorf("issue without --client: exit %d %s", code, errOut)
	}
	out, _, code := e.Run("token", "issue", "--client", "oc", "--no-save")
	if code != 0 {
		t.Fatal("issue failed")
	}
	secret := strings.SplitN(strings.TrimSpace(out), "_", 3)[2]
	list, _, _ := e.Run("token", "list")
	if strings.Contains(list, secret) || !strings.Contains(list, "oc:") || !strings.Contains(list, "active") {
		t.Errorf("token list: %s", list)
	}
	if _, errOut, code := e.Run("token", "show", "--client", "oc"); code != 1 || !strings.Contains(errOut, "token issue --client oc") {
		t.Errorf("show --client oc after --no-save: exit %d %s", code, errOut)
	}
	if _, errOut, code := e.Run("token", "revoke", "0000000000000000"); code != 1 || !strings.Contains(errOut, "no credential") {
		t.Errorf("revoke unknown: exit %d %s", code, errOut)
	}
	if _, _, code := e.Run("token", "revoke"); code != 2 {
		t.Errorf("revoke without id: exit %d", code)
	}
}

// TestDefaultClientKindReload: default_client_kind is read live (a reload
// names no restart for it), and every transport must follow it. HTTP read
// it per request, but the unix socket kept the kind it started with, so
// lowering (or raising) what a bare socket peer gets changed nothing there
// until a restart, without a word in the log. And a workspace token's HTTP
// session opened before the change got 403 "started with another
// credential" on every later request (clients do not initialize again on
// 403); it now ends (404), so its client initializes under the new kind.
func TestDefaultClientKindReload(t *testing.T) {
	e := newIdentityEnv(t) // local:* is level 1, oc:* level 2
	old := e.httpAs(t, "")
	old.Initialize(initMsg)
	if _, body := old.Post(toolsListMsg); toolCount(t, body) != visibleAt(1) {
		t.Fatalf("before the change: tools/list over HTTP %s", body)
	}
	e.WriteConfig("default_client_kind = \"oc\"\n")
	for _, kind := range []string{"unix", "tcp"} {
		if err := syscall.Kill(e.State(kind).PID, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	count := func(transport string) int {
		switch transport {
		case "unix":
			l := e.socketAs(t, "")
			defer l.Close()
			l.Call(initWithClaim("e2e"))
			return toolCount(t, l.Call(toolsListMsg))
		default:
			s := e.httpAs(t, "")
			s.Initialize(initMsg)
			_, body := s.Post(toolsListMsg)
			return toolCount(t, body)
		}
	}
	for _, transport := range []string{"tcp", "unix"} {
		for deadline := time.Now().Add(10 * time.Second); count(transport) != visibleAt(2); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: a new connection still sees %d tools after default_client_kind became oc (level 2: %d)",
					transport, count(transport), visibleAt(2))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if code, body := old.Post(toolsListMsg); code != http.StatusNotFound {
		t.Errorf("the workspace token's session opened before the change: HTTP %d %s, want 404 (initialize again)", code, body)
	}
}
