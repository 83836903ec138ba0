package transport

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/tools"
)

// blockTool runs until its context ends (a stand-in for a long bash call):
// it counts starts and cancellations so tests can see what the transport
// did to it. A call whose tag contains "stubborn" returns a result even
// after its cancellation, as a tool does that finishes in that instant.
type blockTool struct {
	started   chan string // receives the "tag" argument of each start
	starts    atomic.Int32
	cancelled atomic.Int32
}

func newBlockTool() *blockTool { return &blockTool{started: make(chan string, 64)} }

func (b *blockTool) Spec() *tools.Spec {
	return &tools.Spec{Name: "block", Description: "Blocks until cancelled.", Permission: tools.PermRead,
		InputSchema: jsontext.Value(`{"type":"object"}`)}
}

func (b *blockTool) Call(ctx context.Context, args jsontext.Value) (any, error) {
	var a struct {
		Tag string `json:"tag"`
	}
	json.Unmarshal(args, &a)
	b.starts.Add(1)
	b.started <- a.Tag
	<-ctx.Done()
	b.cancelled.Add(1)
	if strings.Contains(a.Tag, "stubborn") {
		return map[string]any{"stubborn_result": true}, nil
	}
	return nil, ctx.Err()
}

// echoTool returns its arguments.
type echoTool struct{}

func (echoTool) Spec() *tools.Spec {
	return &tools.Spec{Name: "echo", Description: "Echoes.", Permission: tools.PermRead,
		InputSchema: jsontext.Value(`{"type":"object"}`)}
}

func (echoTool) Call(ctx context.Context, args jsontext.Value) (any, error) {
	return map[string]any{"args": args}, nil
}

func newTestMCPServer(bt *blockTool) *mcp.Server {
	return &mcp.Server{
		Version:  "0.0.0-test",
		Registry: tools.NewRegistry(&tools.StaticProvider{Name: "test", Source: tools.BuiltinOrigin(), List: []tools.Tool{bt, echoTool{}}}),
		Chain:    &chain.Chain{Trust: chain.NewMemoryTrust(chain.DefaultTrustRows()...)},
	}
}

func newLogger(buf *clawdtest.SyncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// staticAuth accepts one token.
type staticAuth string

func (a staticAuth) Authenticate(tok string) (Identity, string, bool) {
	if tok == string(a) {
		return Identity{Kind: "local"}, "", true
	}
	return Identity{}, "invalid_token", false
}

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// httpFixture is an HTTPServer on a real 127.0.0.1 listener.
type httpFixture struct {
	t    testing.TB
	h    *HTTPServer
	bt   *blockTool
	base string // http://127.0.0.1:port
	log  *clawdtest.SyncBuffer
	hc   *http.Client
}

func startHTTP(t testing.TB, configure func(h *HTTPServer)) *httpFixture {
	t.Helper()
	return startHTTPOn(t, configure, nil)
}

// startHTTPOn is startHTTP with the listener wrapped by wrap (nil: as is).
func startHTTPOn(t testing.TB, configure func(h *HTTPServer), wrap func(net.Listener) net.Listener) *httpFixture {
	t.Helper()
	bt := newBlockTool()
	logs := &clawdtest.SyncBuffer{}
	h := &HTTPServer{
		Server:  newTestMCPServer(bt),
		Auth:    staticAuth(testToken),
		Subject: "ws-test",
		Health: func() Health {
			return Health{Status: "ok", PID: 4242, UptimeS: 7, MCPVersion: mcp.LatestVersion, ActiveTools: 2, LastPolicyEvalMS: 1}
		},
		Logger: newLogger(logs),
	}
	if configure != nil {
		configure(h)
	}
	ln, err := ListenTCP("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var served net.Listener = ln
	if wrap != nil {
		served = wrap(ln)
	}
	// Initialized here, not only in Serve's goroutine, so a test may read
	// the server's tables (conns, sessions) without a data race.
	h.init()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx, served) }()
	f := &httpFixture{t: t, h: h, bt: bt, base: "http://" + ln.Addr().String(), log: logs,
		hc: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
		f.hc.CloseIdleConnections()
	})
	return f
}

// req is one HTTP request in a test table.
type req struct {
	method  string
	path    string
	body    string
	headers map[string]string // "Host" sets req.Host; "-Name" deletes a default
}

// do sends r with the defaults of a well-behaved client (token, JSON
// content type) unless r overrides them.
func (f *httpFixture) do(r req) (*http.Response, []byte) {
	f.t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	if r.path == "" {
		r.path = PathMCP
	}
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, f.base+r.path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+testToken)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range r.headers {
		switch {
		case k == "Host":
			hr.Host = v
		case strings.HasPrefix(k, "-"):
			hr.Header.Del(k[1:])
		default:
			hr.Header.Set(k, v)
		}
	}
	resp, err := f.hc.Do(hr)
	if err != nil {
		f.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp, data
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// initialize starts a session and returns its id.
func (f *httpFixture) initialize() string {
	f.t.Helper()
	resp, body := f.do(req{body: initBody})
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("initialize: HTTP %d %s", resp.StatusCode, body)
	}
	sid := resp.Header.Get(HeaderSessionID)
	if sid == "" {
		f.t.Fatalf("initialize: no %s header", HeaderSessionID)
	}
	return sid
}

// rpcResp decodes a JSON-RPC response body.
type rpcResp struct {
	ID     jsontext.Value `json:"id"`
	Result jsontext.Value `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data"`
	} `json:"error"`
}

func decodeResp(t *testing.T, body []byte) rpcResp {
	t.Helper()
	var r rpcResp
	if err := json.Unmarshal(body, &r, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("response %q is not JSON-RPC: %v", body, err)
	}
	return r
}

// dialRaw opens a raw TCP connection to the fixture.
func (f *httpFixture) dialRaw() net.Conn {
	f.t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}
