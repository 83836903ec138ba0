//go:build linux

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

// progressSeen is what one client's progress handler received.
type progressSeen struct {
	mu    sync.Mutex
	notes []string // "TOKEN|MESSAGE"
}

func (p *progressSeen) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, fmt.Sprintf("%v|%s", req.Params.ProgressToken, req.Params.Message))
}

func (p *progressSeen) get() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.notes...)
}

// TestUpstreamProgressPerClient: two clients of one daemon, on the unix
// socket (through clawd connect) and on Streamable HTTP, in both protocol
// eras, call the same upstream tool at the same time with the same
// progressToken. Each gets the upstream's progress for its own call only,
// under its own token; the upstream saw two different tokens of clawd's,
// never the clients'; what the upstream sent under other tokens, backwards
// or after the answer reaches no one.
func TestUpstreamProgressPerClient(t *testing.T) {
	fake := buildFake(t)
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	hexSum := hex.EncodeToString(sum[:])
	for _, transport := range []string{"unix", "http"} {
		for _, er := range eras {
			t.Run(transport+"/"+er.want, func(t *testing.T) {
				e := newEnv(t)
				e.Init()
				e.MustRun("mcp", "add", "prog", "--stdio", "--", fake, "-progress")
				e.MustRun("mcp", "allow", "--server", "prog", "--sha256", hexSum)
				e.MustRun("trust", "set", "local:*", "3") // upstream tools need level 3
				started := time.Now()
				var connect func(*progressSeen) *mcp.ClientSession
				if transport == "unix" {
					e.Daemon("unix_socket")
					connect = func(p *progressSeen) *mcp.ClientSession {
						return sdkConnect(t, &mcp.CommandTransport{Command: e.Command("connect")},
							dial{era: er, opts: &mcp.ClientOptions{ProgressNotificationHandler: p.handler}})
					}
				} else {
					_, st := e.Daemon("tcp_loopback", "--port", "0")
					tok := clawdtest.ReadToken(t, st.TokenFile)
					connect = func(p *progressSeen) *mcp.ClientSession {
						return sdkConnect(t, &mcp.StreamableClientTransport{Endpoint: "http://" + st.Addr + "/mcp",
							HTTPClient: clawdtest.BearerClient(tok), MaxRetries: -1},
							dial{era: er, opts: &mcp.ClientOptions{ProgressNotificationHandler: p.handler}})
					}
				}
				connectedSince(t, e.Env, "prog", started)
				e.MustRun("mcp", "approve", "prog", "--yes") // new upstream tools are withheld until approved
				waitListed(t, func() *mcp.ClientSession { return connect(&progressSeen{}) }, "prog__progress")

				seen := map[string]*progressSeen{"A": {}, "B": {}}
				texts := map[string]string{}
				var mu sync.Mutex
				var wg sync.WaitGroup
				for tag, p := range seen {
					cs := connect(p)
					wg.Add(1)
					go func() {
						defer wg.Done()
						ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
						defer cancel()
						params := &mcp.CallToolParams{Name: "prog__progress", Arguments: map[string]any{"tag": tag, "n": 6}}
						params.SetProgressToken("same")
						res, err := cs.CallTool(ctx, params)
						mu.Lock()
						defer mu.Unlock()
						if err != nil || res.IsError || len(res.Content) != 1 {
							t.Errorf("client %s: %v %+v", tag, err, res)
							return
						}
						if tc, ok := res.Content[0].(*mcp.TextContent); ok {
							texts[tag] = tc.Text
						}
					}()
				}
				wg.Wait()
				time.Sleep(200 * time.Millisecond) // the late reports would have arrived

				for tag, p := range seen {
					notes := p.get()
					if len(notes) == 0 || notes[len(notes)-1] != "same|"+tag+" 6" {
						t.Errorf("client %s got %v, want it to end with the last report before the answer", tag, notes)
					}
					for _, n := range notes {
						if !strings.HasPrefix(n, "same|"+tag+" ") || strings.Contains(n, "forged") || strings.Contains(n, "backwards") || strings.Contains(n, "late") {
							t.Errorf("client %s got %q", tag, n)
						}
					}
					if !strings.HasPrefix(texts[tag], `token="clawd-`) {
						t.Errorf("client %s: the upstream saw %q, want a token of clawd's", tag, texts[tag])
					}
				}
				if texts["A"] == texts["B"] {
					t.Errorf("both calls reached the upstream with token %s", texts["A"])
				}
			})
		}
	}
}

// waitListed waits until a new session's tools/list offers name: an
// approval reaches a running daemon within its poll of the servers table.
// Each try is a new session, since a 2026-07-28 client may keep a list for
// its TTL.
func waitListed(t *testing.T, connect func() *mcp.ClientSession, name string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		cs := connect()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := cs.ListTools(ctx, nil)
		cancel()
		cs.Close()
		if err == nil {
			for _, tl := range res.Tools {
				if tl.Name == name {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listed (last error %v)", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
