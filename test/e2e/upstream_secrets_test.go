package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

// capture is an MCP server over Streamable HTTP on 127.0.0.1 that keeps
// every header and body it receives.
type capture struct {
	mu   sync.Mutex
	seen bytes.Buffer
	n    int
}

func (c *capture) start(t *testing.T) *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "capture", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hello", Description: "greets"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
			Name string `json:"name"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Name}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.n++
		c.seen.WriteString(r.Method + " " + r.URL.String() + "\n")
		r.Header.Write(&c.seen)
		c.seen.Write(body)
		c.seen.WriteString("\n\n")
		c.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	// clawd holds a stream open on it until its daemon stops, which may be
	// after this cleanup runs: cut connections first.
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts
}

func (c *capture) text() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen.String(), c.n
}

// TestUpstreamSecretsAndEgress drives the trust rules of upstream servers
// through a real daemon and a client that authenticates with a bearer
// credential:
//
//   - a stdio upstream gets a secret by reference (${REF_SECRET}, resolved
//     from the daemon's environment) and one literal; it echoes its whole
//     environment to stderr and into a tool result. The secrets reach the
//     tool result the user asked for and nothing else clawd writes: mcp
//     list/show --json, the audit log, the daemon's log, and (for the
//     reference) the database files. Its environment has none of clawd's
//     own CLAWD_*/CLAWDE_* variables.
//   - an HTTP upstream on 127.0.0.1 is not contacted until its origin is
//     allowed (mcp add prints the exact line; the status says it too); once
//     allowed, it records every header and body it gets while clawd
//     connects, lists and calls: none of clawd's tokens are among them,
//     only the header configured for it.
//   - each step is on record: spawn (command, sha256, pid), connect, the
//     egress refusal and approval, selected by clawd audit --server.
func TestUpstreamSecretsAndEgress(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	const (
		refSecret = "sk-refsecret-0123456789abcdefXYZ"
		litSecret = "sk-literal-abcdefghijklmnop9876QQ"
		capSecret = "cap-upstream-token-5555aaaa"
		canary    = "clawd-own-canary-value-77"
		// A reference whose value looks like no secret to the patterns.
		plainSecret = "horse-battery-staple-42"
	)
	e.Extra = append(e.Extra, "REF_SECRET="+refSecret, "CAP_TOKEN="+capSecret, "CLAWDE_E2E_CANARY="+canary, "CLAWD_E2E_CANARY="+canary, "PLAIN_PAT="+plainSecret)
	fake := fakeUpstream(t)
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)

	dm, st := e.Daemon("tcp_loopback", "--port", "0")
	wsToken := clawdtest.ReadToken(t, st.TokenFile)
	issued := mustJSON[map[string]string](t, e.MustRun("token", "issue", "--client", "cc", "--no-save", "--json"))
	cred := issued["credential"]

	e.MustRun("mcp", "add", "sec", "--stdio", "--env", "API_KEY=${REF_SECRET}", "--env", "LIT_KEY="+litSecret, "--env", "PLAIN=${PLAIN_PAT}", "--", fake, "-dump-env")
	e.MustRun("mcp", "allow", "--server", "sec", "--sha256", hex.EncodeToString(sum[:]))
	// Another stdio server, of no secrets of its own: it inherits clawd's
	// environment, PLAIN_PAT included, and prints that variable to stderr:
	// a name the patterns do not know.
	e.MustRun("mcp", "add", "other", "--stdio", "--", fake, "-print-env", "PLAIN_PAT")
	e.MustRun("mcp", "allow", "--server", "other", "--sha256", hex.EncodeToString(sum[:]))

	var cp capture
	ts := cp.start(t)
	origin := ts.URL // http://127.0.0.1:PORT, the canonical form
	out := e.MustRun("mcp", "add", "cap", "--http", ts.URL+"/mcp", "--header", "Authorization: Bearer ${CAP_TOKEN}")
	if !strings.Contains(out, "clawd egress allow "+origin) {
		t.Errorf("mcp add --http did not propose the egress entry:\n%s", out)
	}
	row := waitServer(t, e, "cap", func(s map[string]any) bool { return s["last_status"] == "unavailable" })
	if msg, _ := row["last_error"].(string); !strings.Contains(msg, "clawd egress allow "+origin) {
		t.Errorf("last_error %q does not give the allow line", msg)
	}
	if _, n := cp.text(); n != 0 {
		t.Fatalf("the upstream got %d requests before its origin was allowed", n)
	}
	e.MustRun("egress", "allow", origin)
	waitServer(t, e, "cap", func(s map[string]any) bool { return s["last_status"] == "connected" })
	waitServer(t, e, "sec", func(s map[string]any) bool { return s["last_status"] == "connected" })
	waitServer(t, e, "other", func(s map[string]any) bool { return s["last_status"] == "connected" })
	// New upstream tools are withheld until approved; callTool below retries
	// until the daemon has picked the approvals up.
	e.MustRun("mcp", "approve", "cap", "--yes")
	e.MustRun("mcp", "approve", "sec", "--yes")

	// A client authenticated with the per-client credential (kind cc,
	// trusted with upstream tools) calls both servers.
	cs := sdkConnect(t, &mcp.StreamableClientTransport{Endpoint: "http://" + st.Addr + "/mcp",
		HTTPClient: clawdtest.BearerClient(cred), MaxRetries: -1}, dial{era: eras[0]})
	callTool := func(name string, args map[string]any) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var res *mcp.CallToolResult
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err == nil && !res.IsError || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String()
	}
	if got := callTool("cap__hello", map[string]any{"name": "x"}); got != "hello x" {
		t.Errorf("cap__hello = %q", got)
	}
	if got := callTool("sec__env", map[string]any{"x": "API_KEY"}); got != refSecret {
		t.Errorf("the tool result the user asked for = %q, want the resolved reference", got)
	}
	environ := callTool("sec__environ", nil)
	if !strings.Contains(environ, "LIT_KEY="+litSecret) {
		t.Errorf("the child's environment lacks LIT_KEY:\n%s", environ)
	}
	for _, line := range strings.Split(environ, "\n") {
		name, _, _ := strings.Cut(line, "=")
		if u := strings.ToUpper(name); strings.HasPrefix(u, "CLAWD_") || strings.HasPrefix(u, "CLAWDE_") || strings.Contains(line, canary) {
			t.Errorf("clawd's own variable reached the upstream: %s", line)
		}
	}

	// A command that quotes the servers' secrets in no shape the audit
	// log's patterns know: its row masks them all the same, as values
	// known to be secret. Its output is the tool result the caller asked
	// for.
	quoted := "echo " + plainSecret + " " + capSecret + " " + refSecret + " x" + litSecret
	if got := callTool("bash", map[string]any{"command": quoted}); !strings.Contains(got, refSecret) {
		t.Errorf("bash's result lacks what it printed: %s", got)
	}

	// What the capture server saw: its own header, none of clawd's tokens.
	seen, n := cp.text()
	if n < 3 || !strings.Contains(seen, "Bearer "+capSecret) {
		t.Fatalf("capture saw %d requests without its configured header:\n%s", n, seen)
	}
	for what, tok := range map[string]string{"workspace token": wsToken, "client credential": cred, "canary": canary} {
		if tok != "" && strings.Contains(seen, tok) {
			t.Errorf("the %s reached the upstream", what)
		}
	}

	// Withdrawing the origin disconnects the server: it is unavailable
	// again, with the line that would allow it.
	e.MustRun("egress", "rm", origin)
	row = waitServer(t, e, "cap", func(s map[string]any) bool { return s["last_status"] == "unavailable" })
	if msg, _ := row["last_error"].(string); !strings.Contains(msg, "clawd egress allow "+origin) {
		t.Errorf("after egress rm, last_error %q", msg)
	}

	// Every output of clawd but that tool result.
	outputs := map[string]string{
		"mcp list --json":     e.MustRun("mcp", "list", "--json"),
		"mcp show sec --json": e.MustRun("mcp", "show", "sec", "--json"),
		"mcp show sec":        e.MustRun("mcp", "show", "sec"),
		"mcp tools --json":    e.MustRun("mcp", "tools", "--json"),
		"audit --json":        e.MustRun("audit", "--limit", "0", "--json"),
		"egress list --json":  e.MustRun("egress", "list", "--json"),
		"mcp logs sec":        e.MustRun("mcp", "logs", "sec"),
		"mcp logs other":      e.MustRun("mcp", "logs", "other"),
	}
	if !strings.Contains(outputs["mcp logs other"], "PLAIN_PAT=") {
		t.Errorf("mcp logs other lacks the variable it printed:\n%s", outputs["mcp logs other"])
	}
	dm.Stop()
	outputs["daemon log"] = dm.Stderr.String()
	for what, text := range outputs {
		for name, secret := range map[string]string{"referenced": refSecret, "literal": litSecret, "header": capSecret, "canary": canary, "plain": plainSecret} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s secret appears in %s", name, what)
			}
		}
	}
	if !strings.Contains(outputs["mcp show sec --json"], "${REF_SECRET}") {
		t.Errorf("mcp show does not show the reference as written:\n%s", outputs["mcp show sec --json"])
	}
	// The reference is never stored resolved.
	files, _ := filepath.Glob(e.DBFile() + "*")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && (bytes.Contains(b, []byte(refSecret)) || bytes.Contains(b, []byte(plainSecret))) {
			t.Errorf("the resolved reference is stored in %s", filepath.Base(f))
		}
	}

	// The audit log has each step, selected by server.
	audit := func(server string) []map[string]any {
		return mustJSON[[]map[string]any](t, e.MustRun("audit", "--server", server, "--limit", "0", "--json"))
	}
	has := func(rows []map[string]any, tool, result, reasonPrefix string) bool {
		for _, r := range rows {
			if r["tool_id"] == tool && r["result"] == result && strings.HasPrefix(r["reason"].(string), reasonPrefix) {
				return true
			}
		}
		return false
	}
	secRows := audit("sec")
	if !has(secRows, "mcp:sec", "Allow", "spawn: command \""+fake+"\" \"-dump-env\"; sha256 "+hex.EncodeToString(sum[:])+"; pid ") ||
		!has(secRows, "mcp:sec", "Allow", "connect: stdio pid ") || !has(secRows, "sec__env", "Allow", "") ||
		!has(secRows, "mcp:sec", "Allow", "disconnect: ") {
		t.Errorf("audit --server sec lacks spawn/connect/call/disconnect rows: %v", secRows)
	}
	for _, r := range secRows {
		if tool := r["tool_id"].(string); tool != "mcp:sec" && !strings.HasPrefix(tool, "mcp:sec/") && !strings.HasPrefix(tool, "sec__") {
			t.Errorf("audit --server sec selected %s", tool)
		}
	}
	capRows := audit("cap")
	if !has(capRows, "mcp:cap", "Deny", "egress_refused: origin "+origin) || !has(capRows, "mcp:cap", "Allow", "connect: http ") ||
		!has(capRows, "cap__hello", "Allow", "") || !has(capRows, "mcp:cap", "Allow", "disconnect: reconnecting") {
		t.Errorf("audit --server cap lacks the refusal, connect or call: %v", capRows)
	}
	all := mustJSON[[]map[string]any](t, e.MustRun("audit", "--limit", "0", "--json"))
	if !has(all, "egress:"+origin, "Allow", "approve: egress to "+origin) {
		t.Errorf("no approval row for egress allow")
	}
}
