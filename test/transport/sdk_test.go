//go:build linux || darwin

package transport_e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerRT adds the workspace token, as a host configured with
// "headers": {"Authorization": "Bearer ..."} does.
type headerRT struct{ tok string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// TestGoSDKOverHTTP drives `clawd serve --transport tcp_loopback` with the
// go-sdk StreamableClientTransport and the token from the token file.
func TestGoSDKOverHTTP(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.state("tcp")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	connect := func(tok string) (*sdk.ClientSession, error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "claude-code", Version: "1"}, nil)
		return client.Connect(ctx, &sdk.StreamableClientTransport{
			Endpoint:   "http://" + st.Addr + "/mcp",
			HTTPClient: &http.Client{Transport: headerRT{tok: tok}},
			MaxRetries: -1,
		}, nil)
	}
	cs, err := connect(readToken(t, st.TokenFile))
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
	st := e.state("tcp")
	s := &httpSession{t: t, base: "http://" + st.Addr, tok: strings.Repeat("a", 64)}
	code, body := s.post(initMsg)
	if code != 403 || !strings.Contains(body, `"code":-32001`) || !strings.Contains(body, `"message":"unauthorized: the bearer token is not this workspace's current token`) {
		t.Errorf("wrong token: HTTP %d %s, want 403 with -32001 unauthorized", code, body)
	}
	if s.sid != "" {
		t.Error("a session id was issued to a wrong token")
	}
}
