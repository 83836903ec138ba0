package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/test/clawdtest"
)

// TestRESTAPIAndDaemonCommands drives the built binary: `clawd serve` on
// loopback HTTP, its REST API with the workspace token (add a server,
// read it masked, refuse the built-in delete, refuse a request without
// the token or for a foreign Host), and `clawd mcp refresh` / `mcp logs`
// reaching that daemon, with clawd itself as the upstream.
func TestRESTAPIAndDaemonCommands(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	inner := filepath.Join(e.Base, "inner")
	os.Mkdir(inner, 0o755)
	b, err := os.ReadFile(clawdBin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	hexSum := hex.EncodeToString(sum[:])

	// Without a daemon: exit 1 with the way to start one; a bad name is a
	// usage error.
	for _, args := range [][]string{{"mcp", "refresh"}, {"mcp", "refresh", "inner"}, {"mcp", "logs", "inner"}} {
		_, errOut, code := e.Run(args...)
		if code != 1 || !strings.Contains(errOut, "no running clawd daemon") || !strings.Contains(errOut, "clawd serve --transport") {
			t.Errorf("%v without a daemon: exit %d, %q", args, code, errOut)
		}
	}
	if _, errOut, code := e.Run("mcp", "logs", "a.b"); code != 2 || !strings.Contains(errOut, "not allowed") {
		t.Errorf("mcp logs a.b: exit %d, %q", code, errOut)
	}

	_, st := e.Daemon("tcp_loopback", "--port", "0")
	api := clawdtest.NewHTTP(t, st.Addr, clawdtest.ReadToken(t, st.TokenFile))
	const prefix = "/api/v1/mcp/servers"

	// The transport's checks come first.
	if r := api.REST("GET", prefix, "", map[string]string{"Authorization": ""}); r.Status != 401 || !strings.Contains(r.Body, `"unauthorized"`) {
		t.Errorf("no token: %d %s", r.Status, r.Body)
	}
	if r := api.REST("POST", prefix, `{"name":"x","command":"/bin/true"}`, map[string]string{"Host": "evil.example"}); r.Status != 403 || !strings.Contains(r.Body, "forbidden_host") {
		t.Errorf("foreign Host: %d %s", r.Status, r.Body)
	}

	// Add clawd as an upstream through the API; its env value comes back masked.
	body := fmt.Sprintf(`{"name":"inner","transport":"stdio","command":%q,"argsJson":%q,"envJson":"{\"INNER_KEY\":\"sk-proj-abcdefghijklmnopwxyz\"}"}`,
		clawdBin, fmt.Sprintf(`["serve","--transport","stdio","--client","cc","--workspace",%q]`, inner))
	r := api.REST("POST", prefix, body, nil)
	if r.Status != 201 || strings.Contains(r.Body, "abcdefghijklmnop") || !strings.Contains(r.Body, `sk-****wxyz`) {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var created struct{ ID int64 }
	json.Unmarshal([]byte(r.Body), &created)
	one := fmt.Sprintf("%s/%d", prefix, created.ID)

	// The built-in server is listed and cannot be deleted.
	r = api.REST("GET", prefix, "", nil)
	var list struct{ Servers []map[string]any }
	if err := json.Unmarshal([]byte(r.Body), &list); err != nil || len(list.Servers) != 2 || list.Servers[0]["builtin"] != true {
		t.Fatalf("list: %s", r.Body)
	}
	if r := api.REST("DELETE", fmt.Sprintf("%s/%v", prefix, list.Servers[0]["id"]), "", nil); r.Status != 403 || !strings.Contains(r.Body, "builtin_server") {
		t.Errorf("deleting the built-in server: %d %s", r.Status, r.Body)
	}

	// Not allowlisted: the daemon picked the row up but does not start it,
	// and refresh says why, with the line that fixes it.
	waitServer(t, e, "inner", func(s map[string]any) bool { return s["last_status"] == "unavailable" })
	_, errOut, code := e.Run("mcp", "refresh", "inner")
	if code != 1 || !strings.Contains(errOut, "clawd mcp allow --server inner --sha256 "+hexSum) {
		t.Fatalf("refresh before allow: exit %d, %q", code, errOut)
	}
	// Refreshing every server exits 1 too when one did not connect.
	if _, errOut, code := e.Run("mcp", "refresh"); code != 1 || !strings.Contains(errOut, "did not connect") {
		t.Fatalf("refresh of all before allow: exit %d, %q; want 1 and the count", code, errOut)
	}
	e.MustRun("mcp", "allow", "--server", "inner", "--sha256", hexSum)
	waitServer(t, e, "inner", func(s map[string]any) bool { return s["last_status"] == "connected" })

	res := mustJSON[map[string]any](t, e.MustRun("mcp", "refresh", "inner", "--json"))
	if res["ok"] != true || res["status"] != "connected" || res["toolCount"] != float64(5) {
		t.Errorf("mcp refresh inner --json: %v", res)
	}
	out := e.MustRun("mcp", "refresh")
	if !strings.Contains(out, "NAME") || !regexpLine(out, "inner", "connected", "5") {
		t.Errorf("mcp refresh:\n%s", out)
	}
	all := mustJSON[map[string]any](t, e.MustRun("mcp", "refresh", "--json"))
	if all["refreshed"] != float64(1) || all["failed"] != float64(0) {
		t.Errorf("mcp refresh --json: %v", all)
	}

	// The inner clawd's stderr: its start line, once per process started.
	logs := e.MustRun("mcp", "logs", "inner")
	if strings.Count(logs, "clawd: serving MCP on stdio") < 2 {
		t.Errorf("mcp logs inner does not show the upstream's stderr of each start:\n%s", logs)
	}
	lj := mustJSON[map[string]any](t, e.MustRun("mcp", "logs", "inner", "--json"))
	if lj["name"] != "inner" || !strings.Contains(fmt.Sprint(lj["logs"]), "serving MCP on stdio") {
		t.Errorf("mcp logs --json: %v", lj)
	}
	if _, _, code := e.Run("mcp", "logs", "clawd"); code != 2 {
		t.Errorf("mcp logs of the built-in server: exit %d, want 2", code)
	}
	if _, errOut, code := e.Run("mcp", "logs", "nosuch"); code != 1 || !strings.Contains(errOut, "no MCP server named nosuch") {
		t.Errorf("mcp logs nosuch: exit %d, %q", code, errOut)
	}

	// PATCH through the API keeps what was not sent; a toggle off stops it.
	if r := api.REST("PUT", one, `{"description":"clawd on the notes"}`, nil); r.Status != 200 || !strings.Contains(r.Body, `"command":`+mustQuote(clawdBin)) {
		t.Errorf("update: %d %s", r.Status, r.Body)
	}
	if r := api.REST("PUT", one+"/toggle?enabled=false", "", nil); r.Status != 200 {
		t.Errorf("toggle: %d %s", r.Status, r.Body)
	}
	waitServer(t, e, "inner", func(s map[string]any) bool { return s["last_status"] == "disabled" })
	if _, errOut, code := e.Run("mcp", "refresh", "inner"); code != 1 || !strings.Contains(errOut, "disabled") {
		t.Errorf("refresh of a disabled server: exit %d, %q", code, errOut)
	}

	// Every change is on record as the workspace token's entity, over rest.
	db, err := store.Open(e.DBFile(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryAudit(context.Background(), store.AuditFilter{Tool: "mcp:inner"})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, row := range rows {
		if row.Transport == "rest" && row.EntityID == "local:"+e.WorkspaceID() {
			reasons = append(reasons, row.Reason)
		}
	}
	joined := strings.Join(reasons, "\n")
	for _, want := range []string{"configure: added stdio server", "connect: refresh failed", "connect: refresh: connected, 5 tools", "configure: changed description", "configure: disabled"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no audit row %q among:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "abcdefghijklmnop") {
		t.Errorf("an audit row holds the secret:\n%s", joined)
	}
}

// regexpLine reports whether some line of out has all the words, in order.
func regexpLine(out string, words ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		i := 0
		for _, w := range f {
			if i < len(words) && w == words[i] {
				i++
			}
		}
		if i == len(words) {
			return true
		}
	}
	return false
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestDaemonCommandsOverTheSocket: with the workspace's daemon on the unix
// socket (no HTTP, so no /api/), refresh and logs reach it through the
// clawd/api method, with the same answers and the same caller rule.
func TestDaemonCommandsOverTheSocket(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	inner := filepath.Join(e.Base, "inner")
	os.Mkdir(inner, 0o755)
	b, _ := os.ReadFile(clawdBin)
	sum := sha256.Sum256(b)
	e.MustRun("mcp", "add", "inner", "--stdio", "--", clawdBin, "serve", "--transport", "stdio", "--client", "cc", "--workspace", inner)
	e.MustRun("mcp", "allow", "--server", "inner", "--sha256", hex.EncodeToString(sum[:]))
	_, st := e.Daemon("unix_socket")
	waitServer(t, e, "inner", func(s map[string]any) bool { return s["last_status"] == "connected" })

	res := mustJSON[map[string]any](t, e.MustRun("mcp", "refresh", "inner", "--json"))
	if res["ok"] != true || res["status"] != "connected" || res["toolCount"] != float64(5) {
		t.Errorf("mcp refresh inner --json over the socket: %v", res)
	}
	if out := e.MustRun("mcp", "refresh"); !regexpLine(out, "inner", "connected", "5") {
		t.Errorf("mcp refresh over the socket:\n%s", out)
	}
	if logs := e.MustRun("mcp", "logs", "inner"); !strings.Contains(logs, "clawd: serving MCP on stdio") {
		t.Errorf("mcp logs over the socket:\n%s", logs)
	}
	if _, errOut, code := e.Run("mcp", "refresh", "nosuch"); code != 1 || !strings.Contains(errOut, "no MCP server named nosuch") {
		t.Errorf("refresh nosuch: exit %d, %q", code, errOut)
	}

	// A socket session that presented a per-client credential (as `clawd
	// connect --client cc` does) is refused, like on HTTP.
	cred := strings.TrimSpace(e.MustRun("token", "issue", "--client", "cc", "--label", "api test"))
	c := clawdtest.DialUnix(t, st.Socket)
	defer c.Close()
	if got := c.Call(`{"jsonrpc":"2.0","id":0,"method":"clawd/authenticate","params":{"credential":"` + cred + `"}}`); !strings.Contains(got, `"kind":"cc"`) {
		t.Fatalf("clawd/authenticate: %s", got)
	}
	c.Initialize("api-test")
	r := c.Request("clawd/api", map[string]any{"method": "POST", "path": "/api/v1/mcp/servers",
		"body": map[string]any{"name": "evil", "command": "/bin/sh"}})
	if r.Error != nil || !strings.Contains(r.Raw, `"status":403`) || !strings.Contains(r.Raw, "credential_not_allowed") {
		t.Errorf("clawd/api with a per-client credential: %s", r)
	}
	if rows := mustJSON[[]map[string]any](t, e.MustRun("mcp", "list", "--json")); len(rows) != 2 {
		t.Errorf("a refused request stored a server: %v", rows)
	}
}
