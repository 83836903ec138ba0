package restapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/restapi"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/transport"
	"github.com/clawde/clawd/internal/upstream"
	"github.com/clawde/clawd/test/clawdtest"
)

// fakeBin is the upstream package's misbehaving stdio MCP server, built
// once: a real process for test, refresh and logs.
var fakeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "restapi-fake")
	if err != nil {
		panic(err)
	}
	if fakeBin, err = clawdtest.BuildFakeUpstream(dir, "fakeserver"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Tokens of the test listener and the identities they prove.
const (
	tokUser  = "workspace-token"   // the workspace token: local:ws-test, level 2 by default
	tokCred  = "client-credential" // a per-client credential of kind cc (level 3)
	tokLow   = "low-token"         // oc, lowered to level 1 below
	tokPhone = "phone-token"       // device: no trust row
)

type auth struct{}

func (auth) Authenticate(b string) (transport.Identity, string, bool) {
	switch b {
	case tokUser:
		return transport.Identity{Kind: "local"}, "", true
	case tokCred:
		return transport.Identity{Kind: "cc", CredentialID: "cred-1"}, "", true
	case tokLow:
		return transport.Identity{Kind: "oc"}, "", true
	case tokPhone:
		return transport.Identity{Kind: "device"}, "", true
	}
	return transport.Identity{}, "invalid_token", false
}

type env struct {
	t    *testing.T
	db   *store.DB
	base string
	m    *upstream.Manager
	api  *restapi.API
	// failAudit makes the API's audit log fail every write.
	failAudit *atomic.Bool
}

// newEnv serves the API as the daemon does: a real SQLite database on
// disk, the transport's HTTP server on 127.0.0.1 in front, an upstream
// manager kept in step with the table.
func newEnv(t *testing.T) *env {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "clawd.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := db.Audit()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := db.SetTrust(ctx, chain.TrustEntry{Entity: "oc:*", Level: 1}); err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	m := upstream.NewManager(reg, upstream.Options{StopGrace: 300 * time.Millisecond})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		db.WatchMCPServers(ctx, 20*time.Millisecond, func(rows []store.MCPServer) { m.Apply(ctx, daemon.UpstreamConfigs(rows)) })
	}()
	al := &switchAudit{log: w}
	api := &restapi.API{DB: db, Upstreams: m, Configs: daemon.UpstreamConfigs, Audit: al,
		Identify: func(r *http.Request) (restapi.Caller, bool) {
			id, ok := transport.RequestIdentity(r.Context())
			c := restapi.Caller{Entity: id.Kind + ":ws-test", Kind: id.Kind, CredentialID: id.CredentialID}
			if k := r.Header.Get("X-Test-Claim"); k != "" { // a socket session's clientInfo claim, as the daemon passes it
				c.Claimed = k + ":ws-test"
			}
			return c, ok
		}}
	srv := &transport.HTTPServer{
		Server:  &mcp.Server{Version: "0.0.0-test", Registry: reg, Chain: &chain.Chain{Trust: db}},
		Auth:    auth{},
		Subject: "ws-test",
		Logger:  slog.New(slog.DiscardHandler),
		API:     api,
	}
	ln, err := transport.ListenTCP("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-served
		<-watched
		cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer ccancel()
		m.Close(cctx)
		db.Close()
	})
	return &env{t: t, db: db, base: "http://" + ln.Addr().String(), m: m, api: api, failAudit: &al.fail}
}

type reply struct {
	status int
	header http.Header
	body   string
	obj    map[string]any
}

func (r reply) str(k string) string { s, _ := r.obj[k].(string); return s }

// do sends a request with the workspace token unless headers say
// otherwise ("Authorization": "" sends none).
func (e *env) do(method, path, body string, headers ...string) reply {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokUser)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &r.obj); err != nil {
			e.t.Fatalf("%s %s: answer is not a JSON object: %v\n%s", method, path, err, b)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			e.t.Errorf("%s %s: Content-Type %q", method, path, ct)
		}
	}
	return r
}

// want fails unless the reply has the status (and, for errors, the code).
func (e *env) want(r reply, status int, code string) reply {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if code != "" {
		if got := r.str("error"); got != code {
			e.t.Fatalf("error %q, want %q: %s", got, code, r.body)
		}
		if r.str("message") == "" {
			e.t.Fatalf("an error without a message: %s", r.body)
		}
	}
	return r
}

func (e *env) count() int {
	e.t.Helper()
	rows, err := e.db.MCPServers(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return len(rows)
}

func (e *env) create(body string) int64 {
	e.t.Helper()
	r := e.want(e.do("POST", restapi.Prefix, body), 201, "")
	id := int64(r.obj["id"].(float64))
	if loc := r.header.Get("Location"); loc != fmt.Sprintf("%s/%d", restapi.Prefix, id) {
		e.t.Errorf("Location %q", loc)
	}
	return id
}

func (e *env) audit(server string) []store.AuditRow {
	e.t.Helper()
	rows, err := e.db.QueryAudit(context.Background(), store.AuditFilter{Tool: "mcp:" + server})
	if err != nil {
		e.t.Fatal(err)
	}
	return rows
}

func TestCredentialChecksComeFirst(t *testing.T) {
	e := newEnv(t)
	// Missing and wrong tokens: 401 with a Bearer challenge and a JSON
	// object, not the JSON-RPC error /mcp answers.
	for _, tok := range []string{"", "Bearer wrong"} {
		r := e.want(e.do("GET", restapi.Prefix, "", "Authorization", tok), 401, "unauthorized")
		want := `Bearer realm="clawd", error="invalid_token"`
		if tok == "" {
			want = `Bearer realm="clawd"`
		}
		if got := r.header.Get("WWW-Authenticate"); got != want {
			t.Errorf("challenge %q, want %q", got, want)
		}
		if !strings.Contains(r.str("message"), "clawd token show") {
			t.Errorf("the message does not say where the token is: %s", r.body)
		}
		e.want(e.do("POST", restapi.Prefix, `{"name":"x","command":"/bin/true"}`, "Authorization", tok), 401, "unauthorized")
	}
	// /mcp keeps its 403 (MCP clients start OAuth on 401).
	if r := e.do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Authorization", ""); r.status != 403 {
		t.Errorf("/mcp without a token: %d", r.status)
	}
	// Host and Origin are checked before the token.
	e.want(e.do("GET", restapi.Prefix, "", "Host", "evil.example:80"), 403, "forbidden_host")
	e.want(e.do("POST", restapi.Prefix, `{"name":"x","command":"/bin/true"}`, "Host", "attacker.test"), 403, "forbidden_host")
	e.want(e.do("POST", restapi.Prefix, `{"name":"x","command":"/bin/true"}`, "Origin", "http://evil.example"), 403, "forbidden_origin")
	e.want(e.do("GET", restapi.Prefix, "", "Origin", "null"), 403, "forbidden_origin")
	// A loopback Origin is fine.
	e.want(e.do("GET", restapi.Prefix, "", "Origin", "http://localhost:3000"), 200, "")
	if n := e.count(); n != 1 {
		t.Fatalf("%d rows after refused requests, want the built-in one", n)
	}
}

func TestWhoMayCall(t *testing.T) {
	e := newEnv(t)
	add := `{"name":"evil","command":"/bin/sh","argsJson":["-c","id"]}`
	// A per-client credential reaches nothing, even of a level-3 kind.
	e.want(e.do("GET", restapi.Prefix, "", "Authorization", "Bearer "+tokCred), 403, "credential_not_allowed")
	e.want(e.do("POST", restapi.Prefix, add, "Authorization", "Bearer "+tokCred), 403, "credential_not_allowed")
	// An entity without a trust row (a paired phone) neither.
	r := e.want(e.do("POST", restapi.Prefix, add, "Authorization", "Bearer "+tokPhone), 403, "unknown_entity")
	if !strings.Contains(r.str("message"), "clawd trust set device:ws-test 2") {
		t.Errorf("the refusal does not give the fix: %s", r.body)
	}
	// Level 1 reads but changes nothing.
	e.want(e.do("GET", restapi.Prefix, "", "Authorization", "Bearer "+tokLow), 200, "")
	e.want(e.do("POST", restapi.Prefix, add, "Authorization", "Bearer "+tokLow), 403, "trust_level_too_low")
	e.want(e.do("DELETE", restapi.Prefix+"/1", "", "Authorization", "Bearer "+tokLow), 403, "trust_level_too_low")
	if n := e.count(); n != 1 {
		t.Fatalf("%d rows after refused changes", n)
	}
	// Each refused request, a read too, is on record as a denial of its
	// caller.
	var rows, reads []store.AuditRow
	for _, row := range e.audit("*") {
		if strings.HasPrefix(row.Reason, "refuse: GET") {
			reads = append(reads, row)
		} else {
			rows = append(rows, row)
		}
	}
	if len(reads) != 1 || reads[0].Result != "Deny" || reads[0].EntityID != "cc:ws-test" || !strings.Contains(reads[0].Reason, "credential") {
		t.Errorf("the refused read is recorded as %+v, want one Deny row of the credential's entity", reads)
	}
	if len(rows) != 3 {
		t.Fatalf("%d refusal rows for the collection, want 3: %+v", len(rows), rows)
	}
	for _, row := range rows {
		if row.Result != "Deny" || row.Step != "upstream" || row.Transport != "rest" || !strings.HasPrefix(row.Reason, "refuse: POST") {
			t.Errorf("refusal row %+v", row)
		}
	}
	if rows[0].EntityID != "cc:ws-test" || rows[0].CredentialID == nil || *rows[0].CredentialID != "cred-1" {
		t.Errorf("the credential's refusal is recorded as %+v", rows[0])
	}
	if del := e.audit("clawd"); len(del) != 1 || del[0].Result != "Deny" || del[0].EntityID != "oc:ws-test" {
		t.Errorf("the refused delete of the built-in row: %+v", del)
	}
	// A claim only lowers: the workspace token (local, level 2) of a client
	// that says it is oc (level 1) reads but changes nothing.
	e.want(e.do("GET", restapi.Prefix, "", "Authorization", "Bearer "+tokUser, "X-Test-Claim", "oc"), 200, "")
	e.want(e.do("POST", restapi.Prefix, add, "Authorization", "Bearer "+tokUser, "X-Test-Claim", "oc"), 403, "trust_level_too_low")
	if n := e.count(); n != 1 {
		t.Fatalf("%d rows after a change refused for its claim", n)
	}
	// A claim of a kind without a row (no device row here) reaches nothing:
	// that kind may do nothing, and a claim never falls back to the
	// credential's row alone.
	e.want(e.do("GET", restapi.Prefix, "", "Authorization", "Bearer "+tokUser, "X-Test-Claim", "device"), 403, "unknown_entity")
	// The workspace token's entity (local, level 2 by default) may.
	e.create(`{"name":"ok","command":"/bin/true"}`)
}

func TestStrictInput(t *testing.T) {
	e := newEnv(t)
	cases := []struct{ body, code, mentions string }{
		{`{"name":"x",`, "bad_json", "not one valid JSON object"},
		{`[1]`, "bad_json", "JSON object"},
		{`null`, "bad_json", "null"},
		{`{"name":"x","command":"/bin/true","colour":"red"}`, "unknown_field", `"colour"`},
		{`{"Name":"x","command":"/bin/true"}`, "unknown_field", "case-sensitive"},
		{`{"name":"x","command":"/bin/true","id":7}`, "read_only_field", `"id"`},
		{`{"name":"x","name":"y","command":"/bin/true"}`, "bad_json", "duplicate"},
		{`{"name":"x","command":"/bin/true","description":null}`, "invalid_field", "null"},
		{`{"name":"x","command":"/bin/true","argsJson":"[1,2]"}`, "invalid_field", "argsJson"},
		{`{"name":"x","command":"/bin/true","envJson":"{\"A\":\"1\",\"A\":\"2\"}"}`, "invalid_field", "envJson"},
		{`{"name":"x","command":"/bin/true","connectTimeoutSeconds":"30"}`, "invalid_field", "connectTimeoutSeconds"},
		{`{"name":"x","command":"/bin/true","connectTimeoutSeconds":1}`, "invalid_field", "5-300"},
		{`{"name":"x","command":"/bin/true","enabled":"yes"}`, "invalid_field", "true or false"},
		{`{"command":"/bin/true"}`, "invalid_field", "name is required"},
		{`{"name":"","command":"/bin/true"}`, "invalid_field", "1-128"},
		{`{"name":"` + strings.Repeat("a", 129) + `","command":"/bin/true"}`, "invalid_field", "1-128"},
		{`{"name":"a.b","command":"/bin/true"}`, "invalid_field", "not allowed"},
		{`{"name":"a__b","command":"/bin/true"}`, "invalid_field", "__"},
		{`{"name":"x","transport":"carrier-pigeon","command":"/bin/true"}`, "invalid_field", "transport"},
		{`{"name":"x","transport":"stdio","url":"http://127.0.0.1/"}`, "invalid_field", "URL"},
		{`{"name":"x","transport":"streamable_http","url":"http://u:p@127.0.0.1/"}`, "invalid_field", "header"},
		{`{"name":"x","command":"/bin/true","envJson":{"CLAWD_TOKEN":"x"}}`, "invalid_field", "CLAWD"},
		{`{"name":"clawd","command":"/bin/true"}`, "name_taken", "built-in"},
	}
	for _, c := range cases {
		r := e.do("POST", restapi.Prefix, c.body)
		if r.status < 400 || r.status >= 500 || r.str("error") != c.code || !strings.Contains(r.str("message"), c.mentions) {
			t.Errorf("%.80s: %d %s, want 4xx %s mentioning %q", c.body, r.status, r.body, c.code, c.mentions)
		}
	}
	// Transport-level limits of a body.
	e.want(e.do("POST", restapi.Prefix, `{"name":"x","command":"/bin/true"}`, "Content-Type", "text/plain"), 415, "unsupported_media_type")
	big := `{"name":"x","command":"/bin/true","description":"` + strings.Repeat("a", 2<<20) + `"}`
	e.want(e.do("POST", restapi.Prefix, big), 413, "body_too_large")
	if n := e.count(); n != 1 {
		t.Fatalf("%d rows after refused bodies", n)
	}
	// The longest name is fine, and a name is unique without regard to case.
	e.create(`{"name":"` + strings.Repeat("a", 128) + `","command":"/bin/true"}`)
	e.create(`{"name":"Fs","command":"/bin/true"}`)
	e.want(e.do("POST", restapi.Prefix, `{"name":"fs","command":"/bin/true"}`), 409, "name_taken")
	// Routing.
	e.want(e.do("GET", restapi.Prefix+"/abc", ""), 404, "not_found")
	e.want(e.do("GET", restapi.Prefix+"/999", ""), 404, "server_not_found")
	e.want(e.do("GET", "/api/v2/things", ""), 404, "not_found")
	r := e.want(e.do("PATCH", restapi.Prefix, `{}`), 405, "method_not_allowed")
	if r.header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow %q", r.header.Get("Allow"))
	}
	for path, allow := range map[string]string{"/1": "GET, PUT, PATCH, DELETE", "/1/toggle": "PUT", "/refresh": "POST"} {
		r := e.want(e.do("OPTIONS", restapi.Prefix+path, ""), 405, "method_not_allowed")
		if r.header.Get("Allow") != allow || !strings.HasSuffix(r.str("message"), "; use "+allow) {
			t.Errorf("OPTIONS %s: Allow %q, message %q; want %q in both", path, r.header.Get("Allow"), r.str("message"), allow)
		}
	}
	e.want(e.do("GET", restapi.Prefix+"?nme=x", ""), 400, "unknown_parameter")
	e.want(e.do("GET", restapi.Prefix, `{"x":1}`), 400, "bad_body")
}

func TestBuiltinServerIsFixed(t *testing.T) {
	e := newEnv(t)
	r := e.want(e.do("GET", restapi.Prefix, ""), 200, "")
	list := r.obj["servers"].([]any)
	first := list[0].(map[string]any)
	if first["name"] != "clawd" || first["builtin"] != true || first["transport"] != "builtin" {
		t.Fatalf("the first server is not the built-in one: %v", first)
	}
	id := int64(first["id"].(float64))
	p := fmt.Sprintf("%s/%d", restapi.Prefix, id)
	e.want(e.do("DELETE", p, ""), 403, "builtin_server")
	e.want(e.do("PUT", p, `{"description":"mine now"}`), 403, "builtin_server")
	e.want(e.do("PUT", p+"/toggle?enabled=false", ""), 403, "builtin_server")
	e.want(e.do("POST", p+"/test", ""), 403, "builtin_server")
	e.want(e.do("POST", p+"/refresh", ""), 403, "builtin_server")
	e.want(e.do("GET", p+"/logs", ""), 403, "builtin_server")
	s, err := e.db.MCPServer(context.Background(), id)
	if err != nil || !s.Builtin || !s.Enabled || s.Description == "mine now" {
		t.Fatalf("the built-in row changed: %+v, %v", s, err)
	}
}

const (
	secretEnv    = "sk-proj-abcdefghijklmnopwxyz"
	secretHeader = "sk-live-1234567890abcdefWXYZ"
	secretQuery  = "q-secret-0123456789abcdefgh"
)

func TestSecretsAreMaskedInEveryAnswer(t *testing.T) {
	e := newEnv(t)
	check := func(what string, r reply) {
		t.Helper()
		for _, s := range []string{secretEnv, secretHeader, secretQuery, "hunter2"} {
			if strings.Contains(r.body, s) {
				t.Errorf("%s shows the secret %s: %s", what, s, r.body)
			}
		}
	}
	sid := e.create(`{"name":"gh","command":"/bin/true","envJson":"{\"API_KEY\":\"` + secretEnv + `\",\"PASS\":\"hunter2\",\"TOKEN\":\"${GH_TOKEN}\"}"}`)
	r := e.want(e.do("POST", restapi.Prefix, `{"name":"remote","transport":"streamable_http","url":"https://mcp.example.com/mcp?key=`+secretQuery+`","headersJson":{"Authorization":"Bearer `+secretHeader+`","X-Ref":"Bearer ${API_TOKEN}"},"enabled":false}`), 201, "")
	check("create", r)
	if r.str("transport") != "streamable_http" || !strings.Contains(r.str("headersJson"), "****WXYZ") ||
		!strings.Contains(r.str("headersJson"), "Bearer ${API_TOKEN}") || !strings.Contains(r.str("url"), "****efgh") {
		t.Errorf("create's answer: %s", r.body)
	}
	hid := int64(r.obj["id"].(float64))
	g := e.want(e.do("GET", fmt.Sprintf("%s/%d", restapi.Prefix, sid), ""), 200, "")
	check("get", g)
	var env map[string]string
	if err := json.Unmarshal([]byte(g.str("envJson")), &env); err != nil {
		t.Fatalf("envJson %q: %v", g.str("envJson"), err)
	}
	if env["API_KEY"] != "sk-****wxyz" || env["PASS"] != "****" || env["TOKEN"] != "${GH_TOKEN}" {
		t.Errorf("envJson %v", env)
	}
	check("list", e.want(e.do("GET", restapi.Prefix, ""), 200, ""))
	check("list by name", e.want(e.do("GET", restapi.Prefix+"?name=GH", ""), 200, ""))
	check("update", e.want(e.do("PUT", fmt.Sprintf("%s/%d", restapi.Prefix, sid), `{"description":"d"}`), 200, ""))
	check("toggle", e.want(e.do("PUT", fmt.Sprintf("%s/%d/toggle?enabled=false", restapi.Prefix, sid), ""), 200, ""))
	check("update http", e.want(e.do("PATCH", fmt.Sprintf("%s/%d", restapi.Prefix, hid), `{"readTimeoutSeconds":90}`), 200, ""))
	// The stored values are intact.
	s, _ := e.db.MCPServer(context.Background(), sid)
	if s.Env["API_KEY"] != secretEnv || s.Env["PASS"] != "hunter2" {
		t.Errorf("stored env %v", map[string]string(s.Env))
	}
	// Sending back what GET showed would store the mask over the secret:
	// refused, and nothing changes.
	e.want(e.do("PUT", fmt.Sprintf("%s/%d", restapi.Prefix, sid), `{"envJson":`+jsonString(g.str("envJson"))+`}`), 400, "masked_value")
	if s2, _ := e.db.MCPServer(context.Background(), sid); s2.Env["API_KEY"] != secretEnv {
		t.Errorf("a masked value was stored: %v", map[string]string(s2.Env))
	}
	// No audit row carries a secret either.
	for _, name := range []string{"gh", "remote"} {
		for _, row := range e.audit(name) {
			if strings.Contains(row.Reason, secretQuery) || strings.Contains(row.Reason, secretHeader) {
				t.Errorf("audit row shows a secret: %s", row.Reason)
			}
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestUpdateKeepsFieldsNotSent(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"name":"fs","description":"files","command":"/bin/true","argsJson":"[\"-a\",\"b c\"]","envJson":{"K":"${V}"},"cwd":"/","connectTimeoutSeconds":15,"enabled":false}`)
	p := fmt.Sprintf("%s/%d", restapi.Prefix, id)
	before, _ := e.db.MCPServer(context.Background(), id)
	r := e.want(e.do("PUT", p, `{"description":"all files","readTimeoutSeconds":120}`), 200, "")
	after, _ := e.db.MCPServer(context.Background(), id)
	if after.Description != "all files" || after.ReadTimeoutSeconds != 120 {
		t.Fatalf("the fields sent were not applied: %+v", after)
	}
	if after.Command != before.Command || strings.Join(after.Args, "|") != "-a|b c" || after.Env["K"] != "${V}" ||
		after.Cwd != "/" || after.ConnectTimeoutSeconds != 15 || after.Enabled || after.Name != "fs" {
		t.Fatalf("fields not sent changed: before %+v after %+v", before, after)
	}
	if r.str("argsJson") != `["-a","b c"]` {
		t.Errorf("argsJson %q", r.str("argsJson"))
	}
	// PATCH is the same; an empty object changes nothing.
	e.want(e.do("PATCH", p, `{"argsJson":[]}`), 200, "")
	e.want(e.do("PATCH", p, `{}`), 200, "")
	if s, _ := e.db.MCPServer(context.Background(), id); len(s.Args) != 0 || s.Description != "all files" {
		t.Fatalf("after PATCH argsJson []: %+v", s)
	}
	// A change that leaves the row invalid is refused whole.
	e.want(e.do("PUT", p, `{"description":"x","url":"http://127.0.0.1/"}`), 400, "invalid_field")
	if s, _ := e.db.MCPServer(context.Background(), id); s.Description != "all files" {
		t.Fatalf("a refused update changed the row: %+v", s)
	}
	// Renaming to a taken name.
	e.create(`{"name":"other","command":"/bin/true"}`)
	e.want(e.do("PUT", p, `{"name":"OTHER"}`), 409, "name_taken")
	// The audit names what changed, never values.
	rows := e.audit("fs")
	var reasons []string
	for _, row := range rows {
		reasons = append(reasons, row.Reason)
		if row.EntityID != "local:ws-test" || row.Transport != "rest" || row.Result != "Allow" {
			t.Errorf("audit row %+v", row)
		}
	}
	want := []string{"configure: added stdio server running /bin/true (disabled)",
		"configure: changed description, readTimeoutSeconds", "configure: changed argsJson", "configure: nothing changed"}
	if strings.Join(reasons, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit reasons:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
	}
	// Delete.
	e.want(e.do("DELETE", p, ""), 204, "")
	e.want(e.do("GET", p, ""), 404, "server_not_found")
	e.want(e.do("DELETE", p, ""), 404, "server_not_found")
}

func TestToggle(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"name":"fs","command":"/bin/true","enabled":false}`)
	p := fmt.Sprintf("%s/%d/toggle", restapi.Prefix, id)
	for _, q := range []string{"", "?enabled=yes", "?enabled=true&enabled=false", "?enabled=true&x=1"} {
		e.want(e.do("PUT", p+q, ""), 400, "bad_parameter")
	}
	e.want(e.do("POST", p+"?enabled=true", ""), 405, "method_not_allowed")
	r := e.want(e.do("PUT", p+"?enabled=true", ""), 200, "")
	if r.obj["enabled"] != true {
		t.Fatalf("toggle answered %s", r.body)
	}
	if s, _ := e.db.MCPServer(context.Background(), id); !s.Enabled {
		t.Fatal("not enabled in the table")
	}
	e.want(e.do("PUT", p+"?enabled=true", ""), 200, "") // already: no change, no row
	e.want(e.do("PUT", p+"?enabled=false", ""), 200, "")
	if s, _ := e.db.MCPServer(context.Background(), id); s.Enabled {
		t.Fatal("not disabled in the table")
	}
	rows := e.audit("fs")
	if len(rows) != 3 || rows[1].Reason != "configure: enabled" || rows[2].Reason != "configure: disabled" {
		t.Errorf("audit %+v", rows)
	}
}

// TestTestRefreshAndLogs drives a real stdio upstream through the daemon's
// manager: test lists its tools, refresh reconnects it and reports the
// outcome, logs shows its stderr with the secret it printed masked.
func TestTestRefreshAndLogs(t *testing.T) {
	e := newEnv(t)
	const secret = "pw-0123456789-abcdefghij-secret"
	id := e.create(`{"name":"fake","command":` + jsonString(fakeBin) + `,"argsJson":["--print-env","FAKE_PASSWORD"],"envJson":{"FAKE_PASSWORD":"` + secret + `"},"connectTimeoutSeconds":10,"readTimeoutSeconds":10}`)
	p := fmt.Sprintf("%s/%d", restapi.Prefix, id)

	r := e.want(e.do("POST", p+"/test", ""), 200, "")
	if r.obj["ok"] != true || !strings.Contains(r.body, `"name":"fake__echo"`) || !strings.Contains(r.body, `"upstreamName":"echo"`) {
		t.Fatalf("test answered %s", r.body)
	}
	if r.obj["latencyMs"].(float64) <= 0 {
		t.Errorf("no latency: %s", r.body)
	}

	r = e.want(e.do("POST", p+"/refresh", ""), 200, "")
	if r.obj["ok"] != true || r.str("status") != "connected" || r.obj["toolCount"].(float64) < 5 {
		t.Fatalf("refresh answered %s", r.body)
	}
	// The process that refresh started wrote the secret to stderr; logs
	// shows the line, masked.
	var logs reply
	deadline := time.Now().Add(10 * time.Second)
	for {
		logs = e.want(e.do("GET", p+"/logs", ""), 200, "")
		if strings.Contains(logs.str("logs"), "FAKE_PASSWORD=") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.str("logs"), "FAKE_PASSWORD=") {
		t.Fatalf("logs lack the child's stderr: %s", logs.body)
	}
	if strings.Contains(logs.body, secret) {
		t.Fatalf("logs show the secret: %s", logs.body)
	}

	// Refresh of every server: the disabled one is skipped.
	e.create(`{"name":"off","command":"/bin/true","enabled":false}`)
	r = e.want(e.do("POST", restapi.Prefix+"/refresh", ""), 200, "")
	if r.obj["refreshed"].(float64) != 1 || r.obj["skipped"].(float64) != 1 || r.obj["failed"].(float64) != 0 {
		t.Fatalf("refresh all answered %s", r.body)
	}
	offID := int64(0)
	for _, s := range r.obj["servers"].([]any) {
		if m := s.(map[string]any); m["name"] == "off" {
			offID = int64(m["id"].(float64))
		}
	}
	e.want(e.do("POST", fmt.Sprintf("%s/%d/refresh", restapi.Prefix, offID), ""), 409, "server_disabled")
	if rows := e.audit("fake"); len(rows) < 4 || !strings.HasPrefix(rows[1].Reason, "connect: test: ok") || rows[2].Reason != "connect: refresh: connected, 7 tools" {
		for _, row := range rows {
			t.Log(row.Reason)
		}
		t.Errorf("audit of test and refresh")
	}
}

// TestSlowUpstreamIsBounded: test and refresh of a server that never
// answers initialize end with a clear error after its connect timeout,
// not never.
func TestSlowUpstreamIsBounded(t *testing.T) {
	e := newEnv(t)
	e.api.MaxActions = 1
	id := e.create(`{"name":"hang","command":` + jsonString(fakeBin) + `,"argsJson":["--hang-init"],"connectTimeoutSeconds":5,"readTimeoutSeconds":5}`)
	p := fmt.Sprintf("%s/%d", restapi.Prefix, id)
	start := time.Now()
	busy := make(chan reply, 1)
	go func() {
		time.Sleep(time.Second) // while the test below hangs in initialize
		busy <- e.do("POST", p+"/test", "{}")
	}()
	r := e.want(e.do("POST", p+"/test", "{}"), 502, "test_failed")
	e.want(<-busy, 503, "busy")
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("test took %v", el)
	}
	if !strings.Contains(r.str("message"), "hang") {
		t.Errorf("message %s", r.str("message"))
	}
	start = time.Now()
	r = e.want(e.do("POST", p+"/refresh", ""), 502, "refresh_failed")
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("refresh took %v", el)
	}
}

// switchAudit is the store's audit log, or one that cannot write (a full
// disk, a broken journal) while fail is set.
type switchAudit struct {
	log   chain.AuditLog
	fail  atomic.Bool
	tried atomic.Int64
}

func (s *switchAudit) Record(r *chain.AuditRecord) (int64, error) {
	if s.fail.Load() {
		s.tried.Add(1)
		return 0, errors.New("journal write: no space left on device")
	}
	return s.log.Record(r)
}
func (s *switchAudit) RecordOutcome(id int64, o chain.Outcome) { s.log.RecordOutcome(id, o) }

// TestChangeFailsClosed: a change whose audit row cannot be written is not
// made, and is answered 503; the row of a change that is made is on record
// with its outcome.
func TestChangeFailsClosed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.create(`{"name":"fs","command":"/bin/true","enabled":false}`)
	before, err := e.db.MCPServer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	e.failAudit.Store(true)
	p := fmt.Sprintf("%s/%d", restapi.Prefix, id)
	for _, c := range []struct{ method, path, body string }{
		{"POST", restapi.Prefix, `{"name":"other","command":"/bin/true"}`},
		{"PUT", p, `{"description":"changed","command":"/bin/false"}`},
		{"PATCH", p, `{}`},
		{"PUT", p + "/toggle?enabled=true", ""},
		{"DELETE", p, ""},
	} {
		r := e.want(e.do(c.method, c.path, c.body), 503, "audit_failed")
		if !strings.Contains(r.str("message"), "not made") {
			t.Errorf("%s %s: message %q", c.method, c.path, r.str("message"))
		}
	}
	if n := e.api.Audit.(*switchAudit).tried.Load(); n != 5 {
		t.Errorf("%d audit writes tried, want 5", n)
	}
	after, err := e.db.MCPServer(ctx, id)
	if err != nil {
		t.Fatalf("the server is gone after a delete whose audit failed: %v", err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the row changed without an audit row:\nbefore %+v\nafter  %+v", before, after)
	}
	if _, err := e.db.MCPServerByName(ctx, "other"); !errors.Is(err, store.ErrServerNotFound) {
		t.Errorf("a server was added without an audit row: %v", err)
	}
	// A toggle that changes nothing needs no row, and so does not fail.
	e.want(e.do("PUT", p+"/toggle?enabled=false", ""), 200, "")

	e.failAudit.Store(false)
	e.want(e.do("PUT", p+"/toggle?enabled=true", ""), 200, "")
	rows := e.audit("fs")
	if len(rows) != 2 || rows[1].Reason != "configure: enabled" {
		t.Fatalf("audit %+v", rows)
	}
	deadline := time.Now().Add(5 * time.Second)
	for rows[1].Outcome == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		rows = e.audit("fs")
	}
	if o := rows[1].Outcome; o == nil || *o != chain.OutcomeOK {
		t.Errorf("outcome of the change %v", o)
	}
}

// A URL the validator refuses is named in its message masked as answers
// show it: a password in user:password@ or a query value never comes back
// in a 400, whichever rule the URL broke first.
func TestRefusedURLIsMaskedInTheMessage(t *testing.T) {
	e := newEnv(t)
	const pass, query = "supersecretpassword", "supersecretquery0123"
	for _, u := range []string{
		"http://u:" + pass + "@h:99999/",
		"http://u:" + pass + "@h:abc/",
		"http://u:" + pass + "@/",
		"ftp://u:" + pass + "@h/",
		"https://h/mcp?key=" + query + "#frag",
		"https://h/mcp?key=" + query + " x",
		"https://h:0/mcp?key=" + query,
		"gopher://h/mcp?key=" + query,
	} {
		r := e.want(e.do("POST", restapi.Prefix, `{"name":"x","transport":"http","url":`+jsonString(u)+`}`), 400, "invalid_field")
		if m := r.str("message"); strings.Contains(m, pass) || strings.Contains(m, query) || !strings.Contains(m, "URL") {
			t.Errorf("%s: the message shows the secret (or not the URL): %s", u, m)
		}
	}
}

// A URL as answers show it (query values masked) sent back would store the
// mask over the secret, as for env and header values: refused.
func TestMaskedURLIsRefused(t *testing.T) {
	e := newEnv(t)
	const query = "supersecretquery0123"
	id := e.create(`{"name":"web","transport":"http","url":"https://mcp.example.com/mcp?key=` + query + `"}`)
	p := fmt.Sprintf("%s/%d", restapi.Prefix, id)
	shown := e.want(e.do("GET", p, ""), 200, "").str("url")
	if strings.Contains(shown, query) {
		t.Fatalf("GET shows the query secret: %s", shown)
	}
	e.want(e.do("PUT", p, `{"description":"d","url":`+jsonString(shown)+`}`), 400, "masked_value")
	e.want(e.do("POST", restapi.Prefix, `{"name":"web2","transport":"http","url":`+jsonString(shown)+`}`), 400, "masked_value")
	if s, _ := e.db.MCPServer(context.Background(), id); s.URL != "https://mcp.example.com/mcp?key="+query || s.Description != "" {
		t.Fatalf("a masked URL was stored: %q", s.URL)
	}
}

// null inside argsJson, envJson and headersJson is refused like null for
// a field, not stored as an empty string or an empty list.
func TestNullInsideEmbeddedJSONIsRefused(t *testing.T) {
	e := newEnv(t)
	for _, b := range []string{
		`{"name":"x","command":"/bin/true","envJson":{"K":null}}`,
		`{"name":"x","command":"/bin/true","envJson":"{\"K\":null}"}`,
		`{"name":"x","command":"/bin/true","envJson":"null"}`,
		`{"name":"x","command":"/bin/true","argsJson":["a",null]}`,
		`{"name":"x","command":"/bin/true","argsJson":"null"}`,
		`{"name":"x","transport":"http","url":"http://h/","headersJson":{"X-A":null}}`,
	} {
		r := e.want(e.do("POST", restapi.Prefix, b), 400, "invalid_field")
		if !strings.Contains(r.str("message"), "null") {
			t.Errorf("%s: message %q does not say null", b, r.str("message"))
		}
	}
	if n := e.count(); n != 1 {
		t.Fatalf("%d rows after refused bodies", n)
	}
}

// A connection error quotes the request's URL (Go's url.Error): test and
// refresh answers, their audit rows and lastError show it masked as the
// url field is, not only what the free-text masker happens to know.
func TestConnectErrorsMaskTheURL(t *testing.T) {
	e := newEnv(t)
	const query = "supersecretquery0123"
	id := e.create(`{"name":"web","transport":"http","url":"http://127.0.0.1:1/mcp?key=` + query + `","connectTimeoutSeconds":5}`)
	p := fmt.Sprintf("%s/%d", restapi.Prefix, id)
	check := func(what, s string) {
		t.Helper()
		if strings.Contains(s, query) {
			t.Errorf("%s shows the query secret: %s", what, s)
		}
	}
	check("test", e.want(e.do("POST", p+"/test", ""), 502, "test_failed").body)
	check("refresh", e.do("POST", p+"/refresh", "").body)
	check("get", e.want(e.do("GET", p, ""), 200, "").body)
	check("list", e.want(e.do("GET", restapi.Prefix, ""), 200, "").body)
	for _, row := range e.audit("web") {
		check("audit row", row.Reason)
	}
}
