package mcp_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// upstreamResult is what a fake upstream MCP server answers to tools/call:
// an image item next to text, structuredContent, isError and _meta, pretty
// printed (its newlines must not reach the line-framed stream).
const upstreamResult = `{
  "content": [
    {"type": "text", "text": "captured \"screen\" 1\nline two"},
    {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "mimeType": "image/png",
     "annotations": {"audience": ["user"], "priority": 0.5}}
  ],
  "structuredContent": {"width": 1, "height": 1, "tags": ["a", "é"], "nested": {"ok": false}},
  "isError": true,
  "_meta": {"example.com/trace": "abc-123", "progressToken": 7}
}`

// upstreamTool stands for one tool of an upstream server: it hands back
// the server's CallToolResult as an upstream provider does, parsed with
// tools.ParseCallResult and not wrapped again.
type upstreamTool struct {
	name string
	ran  *atomic.Int64
}

func (u upstreamTool) Spec() *tools.Spec {
	return &tools.Spec{Name: u.name, Permission: tools.PermUpstream, InputSchema: jsontext.Value(`{"type":"object"}`)}
}

func (u upstreamTool) Call(context.Context, jsontext.Value) (any, error) {
	u.ran.Add(1)
	return tools.ParseCallResult(jsontext.Value(upstreamResult))
}

// allowOne allowlists one (server, sha256) pair.
type allowOne struct{ server, sum string }

func (a allowOne) ServerAllowed(server, sum string) (bool, error) {
	return server == a.server && sum == a.sum, nil
}

// lineClient is an NDJSON client over pipes that keeps notifications apart.
type lineClient struct {
	t     *testing.T
	w     io.Writer
	resp  chan map[string]any
	notes chan string // notification methods
	id    int
}

func serveSession(t *testing.T, srv *mcp.Server, caller *chain.Caller) *lineClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineClient{t: t, w: inW, resp: make(chan map[string]any, 16), notes: make(chan string, 4096)}
	go func() {
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var m map[string]any
				if jerr := json.Unmarshal(line, &m); jerr != nil {
					t.Errorf("a line from the server is not one JSON message: %q: %v", line, jerr)
				} else if method, ok := m["method"].(string); ok {
					c.notes <- method
				} else {
					c.resp <- m
				}
			}
			if err != nil {
				return
			}
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s := srv.NewSession(caller, mcp.SessionOptions{})
	go func() {
		defer close(done)
		s.Serve(ctx, jsonrpc.NewStream(inR, outW, srv.MessageLimit()))
		outW.Close()
	}()
	t.Cleanup(func() { cancel(); inW.Close(); <-done })
	c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *lineClient) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// request returns the response's raw JSON too, for byte-level checks.
func (c *lineClient) request(method string, params any) map[string]any {
	c.t.Helper()
	c.id++
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	select {
	case m := <-c.resp:
		if m["id"] != float64(c.id) {
			c.t.Fatalf("response %v, want id %d", m, c.id)
		}
		return m
	case <-time.After(15 * time.Second):
		c.t.Fatalf("no response to %s", method)
	}
	return nil
}

func (c *lineClient) toolNames() []string {
	r := c.request("tools/list", map[string]any{})
	var out []string
	for _, t := range r["result"].(map[string]any)["tools"].([]any) {
		out = append(out, t.(map[string]any)["name"].(string))
	}
	slices.Sort(out)
	return out
}

// countNotes counts list_changed notifications until none came for quiet
// (or for at most limit in all).
func (c *lineClient) countNotes(quiet, limit time.Duration) int {
	n := 0
	end := time.After(limit)
	for {
		select {
		case m := <-c.notes:
			if m == "notifications/tools/list_changed" {
				n++
			}
		case <-time.After(quiet):
			return n
		case <-end:
			return n
		}
	}
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUpstreamProviderPlugsIn walks an upstream provider through the three
// things the server does for it, over a real stream session and the real
// chain:
//
//  1. origin: the supply-chain step decides by the provider's Origin. A
//     local executable that is allowlisted passes; the same tool from a
//     remote server (no binary path at all) whose origin is not on the
//     egress allowlist is refused -32004 origin_not_allowlisted, is not
//     listed, and its handler never runs.
//  2. results: the upstream CallToolResult (image content,
//     structuredContent, isError, _meta) reaches the client as it came,
//     not wrapped again.
//  3. list_changed: a burst of 100 tool-list changes reaches the client as
//     one notification (debounced), and a later change as one more.
func TestUpstreamProviderPlugsIn(t *testing.T) {
	ws, err := sandbox.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	bin := filepath.Join(t.TempDir(), "shots-server")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec shots --stdio\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("#!/bin/sh\nexec shots --stdio\n"))

	var localRan, remoteRan atomic.Int64
	local := &tools.StaticProvider{Name: "shots", Source: tools.LocalOrigin(bin),
		List: []tools.Tool{upstreamTool{"shots__capture", &localRan}}}
	remote := &tools.StaticProvider{Name: "cloud-shots", Source: tools.RemoteOrigin("https://shots.example/mcp"),
		List: []tools.Tool{upstreamTool{"cloud__capture", &remoteRan}}}
	srv := &mcp.Server{
		Version:  "1.0.0",
		Registry: tools.NewRegistry(local, remote),
		Chain: &chain.Chain{WS: ws, Trust: chain.NewMemoryTrust(chain.DefaultTrustRows()...),
			Allow: allowOne{server: "shots", sum: hex.EncodeToString(sum[:])}},
	}
	c := serveSession(t, srv, &chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "cc", Subject: "ws"})

	// 1. Origin.
	if got := c.toolNames(); !slices.Equal(got, []string{"shots__capture"}) {
		t.Errorf("tools/list = %v, want only the allowlisted local server's tool", got)
	}
	r := c.request("tools/call", map[string]any{"name": "cloud__capture", "arguments": map[string]any{}})
	e, _ := r["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if e == nil || e["code"] != float64(chain.CodeSupplyChainDenied) || data["reason"] != "origin_not_allowlisted" ||
		!strings.HasPrefix(e["message"].(string), "supply_chain_denied: upstream server cloud-shots is remote") {
		t.Errorf("remote tool answered %v; want -32004 origin_not_allowlisted", r)
	}
	if remoteRan.Load() != 0 {
		t.Error("the remote server's tool ran: a provider without a binary path was taken for built-in")
	}

	// 2. Results pass through.
	r = c.request("tools/call", map[string]any{"name": "shots__capture", "arguments": map[string]any{}})
	if localRan.Load() != 1 {
		t.Fatalf("the allowlisted tool did not run: %v", r)
	}
	var want any
	if err := json.Unmarshal([]byte(upstreamResult), &want); err != nil {
		t.Fatal(err)
	}
	if got, w := canonical(t, r["result"]), canonical(t, want); got != w {
		t.Errorf("result reached the client as\n%s\nwant the upstream's, untouched:\n%s", got, w)
	}
	if (&tools.CallResult{IsError: true}).AuditOutcome() != chain.OutcomeToolError {
		t.Error("an upstream isError result is not audited as a tool error")
	}

	// 3. list_changed, debounced. Drain anything from before.
	c.countNotes(100*time.Millisecond, time.Second)
	for i := range 100 {
		names := []tools.Tool{upstreamTool{"shots__capture", &localRan}}
		if i%2 == 0 {
			names = append(names, upstreamTool{"shots__record", &localRan})
		}
		local.SetTools(names) // what a reconnecting upstream's re-announcements do
	}
	// The burst takes well under toolChangeDelay on an idle machine; a
	// loaded one may preempt it a few times, hence the bound, far below
	// the 100 an undebounced server sends.
	if n := c.countNotes(500*time.Millisecond, 5*time.Second); n < 1 || n > 5 {
		t.Errorf("100 changes in a burst gave %d list_changed notifications, want 1 (at most 5)", n)
	}
	local.SetTools([]tools.Tool{upstreamTool{"shots__capture", &localRan}, upstreamTool{"shots__zoom", &localRan}})
	if n := c.countNotes(500*time.Millisecond, 5*time.Second); n != 1 {
		t.Errorf("a later single change gave %d notifications, want 1", n)
	}
	if got := c.toolNames(); !slices.Equal(got, []string{"shots__capture", "shots__zoom"}) {
		t.Errorf("tools/list after the change = %v, want the provider's new list", got)
	}
}
