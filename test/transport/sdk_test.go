//go:build linux || darwin

package transport_e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestGoSDKOverHTTP drives `clawd serve --transport tcp_loopback` with the
// go-sdk StreamableClientTransport and the token from the token file.
func TestGoSDKOverHTTP(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.State("tcp")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	connect := func(tok string) (*sdk.ClientSession, error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "claude-code", Version: "1"}, nil)
		return client.Connect(ctx, &sdk.StreamableClientTransport{
			Endpoint:   "http://" + st.Addr + "/mcp",
			HTTPClient: clawdtest.BearerClient(tok),
			MaxRetries: -1,
		}, nil)
	}
	cs, err := connect(clawdtest.ReadToken(t, st.TokenFile))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) == 0 {
		t.Fatalf("tools/list: %v %v", lt, err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := res.StructuredContent.(map[string]any); res.IsError || !ok || m["content"] != "hello\n" {
		t.Fatalf("read_file: %+v", res)
	}
	// Test_auth_rejects_invalid_token, through the SDK: no session at all.
	if cs2, err := connect(strings.Repeat("0", 64)); err == nil {
		cs2.Close()
		t.Fatal("the SDK connected with a wrong token")
	}
}

// Test_auth_rejects_invalid_token against the binary, on the wire.
func Test_auth_rejects_invalid_token(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.State("tcp")
	s := clawdtest.NewHTTP(t, st.Addr, strings.Repeat("a", 64))
	code, body := s.Post(initMsg)
	if code != 403 || !strings.Contains(body, `"code":-32001`) || !strings.Contains(body, `"message":"unauthorized: the bearer token is not this workspace's current token`) {
		t.Errorf("wrong token: HTTP %d %s, want 403 with -32001 unauthorized", code, body)
	}
	if s.SessionID != "" {
		t.Error("a session id was issued to a wrong token")
	}
}
