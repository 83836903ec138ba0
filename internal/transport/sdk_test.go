package transport

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerRT adds the workspace token to every request, as an MCP host
// configured with an Authorization header does.
type bearerRT struct {
	tok  string
	next http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.next.RoundTrip(r)
}

// sdkConnect connects the go-sdk client pinned to the legacy protocol
// (initialize and a session); sdkConnectVersion with "" lets it choose
// (server/discover first, then 2026-07-28 without a session).
func sdkConnect(t *testing.T, f *httpFixture, tok string) (*sdk.ClientSession, error) {
	t.Helper()
	return sdkConnectVersion(t, f, tok, "2025-11-25", nil)
}

func sdkConnectVersion(t *testing.T, f *httpFixture, tok, version string, opts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "claude-code", Version: "1.0"}, opts)
	tr := &sdk.StreamableClientTransport{
		Endpoint:   f.base + PathMCP,
		HTTPClient: &http.Client{Transport: bearerRT{tok: tok, next: http.DefaultTransport}},
		MaxRetries: -1,
	}
	return client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
}

// TestGoSDKStreamableClient drives the HTTP transport with the official
// go-sdk client: initialize, tools/list, tools/call, a cancelled call, and
// DELETE on close.
func TestGoSDKStreamableClient(t *testing.T) {
	f := startHTTP(t, nil)
	cs, err := sdkConnect(t, f, testToken)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := cs.InitializeResult().ServerInfo.Name; got != "clawde-mcp" {
		t.Errorf("serverInfo.name = %q", got)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "block,echo" {
		t.Errorf("tools = %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"x": 1}})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if res.IsError {
		t.Fatalf("echo returned an error result: %+v", res.Content)
	}
	if m, ok := res.StructuredContent.(map[string]any); !ok || m["args"].(map[string]any)["x"] != 1.0 {
		t.Errorf("structuredContent = %#v", res.StructuredContent)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	// The SDK cancels a call whose context ends: the tool sees it.
	cctx, ccancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "block", Arguments: map[string]any{}})
		errc <- err
	}()
	<-f.bt.started
	ccancel()
	if err := <-errc; err == nil {
		t.Error("a cancelled call returned no error")
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.bt.cancelled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f.bt.cancelled.Load() != 1 {
		t.Error("the SDK's cancellation did not reach the tool")
	}
	if n := f.h.sessions.len(); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if n := f.h.sessions.len(); n != 0 {
		t.Errorf("%d sessions after the SDK closed its session, want 0 (DELETE)", n)
	}
}

func TestGoSDKWrongToken(t *testing.T) {
	f := startHTTP(t, nil)
	cs, err := sdkConnect(t, f, strings.Repeat("f", 64))
	if err == nil {
		cs.Close()
		t.Fatal("connected with a wrong token")
	}
	if !strings.Contains(err.Error(), "Forbidden") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Errorf("error %q does not say unauthorized", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Error("the refusal took until the deadline")
	}
}
