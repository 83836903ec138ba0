//go:build unix

package transport

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/test/clawdtest"
)

// eraServer is an mcp.Server with the report and echo tools and an audit log.
func eraServer() (*mcp.Server, *memAudit, *reportTool) {
	audit := &memAudit{}
	rt := &reportTool{}
	return &mcp.Server{
		Version:  "0.0.0-test",
		Registry: tools.NewRegistry(&tools.StaticProvider{Name: "test", Source: tools.BuiltinOrigin(), List: []tools.Tool{rt, echoTool{}}}),
		Chain:    &chain.Chain{Trust: chain.NewMemoryTrust(chain.DefaultTrustRows()...), Audit: audit},
	}, audit, rt
}

// streamTransports returns, for stdio and the unix socket, a function that
// opens a new connection to srv (stdio: a new session over a pipe, as a
// host spawning clawd gets).
func streamTransports(t *testing.T, srv *mcp.Server) map[string]func() *lineConn {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stdio := func() *lineConn {
		// A socket pair has kernel buffers as stdio's pipes do (net.Pipe
		// has none: a notification to a connection the test reads later
		// would block the sender).
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		cli := fdConn(t, fds[0])
		srvSide := fdConn(t, fds[1])
		caller := &chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "local", Subject: "ws-test"}
		go ServeStdio(ctx, srv, caller, srvSide, srvSide)
		t.Cleanup(func() { cli.Close() })
		return &lineConn{c: cli, br: bufio.NewReader(cli)}
	}
	path := filepath.Join(shortDir(t), "s.sock")
	ln, err := ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	u := &UnixServer{Server: srv, Subject: "ws-test", Logger: newLogger(&clawdtest.SyncBuffer{})}
	done := make(chan error, 1)
	go func() { done <- u.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done; ln.Close() })
	unix := func() *lineConn { return dialLines(t, path) }
	return map[string]func() *lineConn{"stdio": stdio, "unix": unix}
}

func fdConn(t *testing.T, fd int) net.Conn {
	f := os.NewFile(uintptr(fd), "socketpair")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func line26(id, method, params, metaExtra string) string {
	m := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	if metaExtra != "" {
		m += "," + metaExtra
	}
	p := `"_meta":{` + m + `}`
	if params != "" {
		p = params + "," + p
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + p + `}}`
}

// quiet asserts that the connection sends nothing within d.
func (l *lineConn) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	l.c.SetReadDeadline(time.Now().Add(d))
	if line, err := l.br.ReadString('\n'); err == nil {
		t.Fatalf("unexpected message: %s", line)
	}
}

// The 2026-07-28 rules on stdio and the unix socket, over the real
// transports: discover then initialize on one connection, subscriptions,
// nothing unsolicited, progress and log messages only when asked, and
// cancellation of a stateless call.
func TestStreamTransportsBothEras(t *testing.T) {
	srv, audit, rt := eraServer()
	for name, dial := range streamTransports(t, srv) {
		t.Run(name, func(t *testing.T) {
			a := dial()
			a.send(t, line26(`"d"`, "server/discover", "", ""))
			if d := a.recv(t); !strings.HasPrefix(d, `{"jsonrpc":"2.0","id":"d","result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"`) {
				t.Fatalf("discover: %s", d)
			}
			a.send(t, initBody)
			if r := a.recv(t); !strings.Contains(r, `"protocolVersion":"2025-11-25"`) {
				t.Fatalf("initialize after discover: %s", r)
			}

			b, c := dial(), dial()
			c.send(t, line26("1", "tools/list", "", ""))
			if r := c.recv(t); !strings.Contains(r, `"cacheScope":"private"`) {
				t.Fatalf("tools/list: %s", r)
			}
			b.send(t, line26("5", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`, ""))
			if ack := b.recv(t); !strings.Contains(ack, `notifications/subscriptions/acknowledged`) || !strings.Contains(ack, `"io.modelcontextprotocol/subscriptionId":5}`) {
				t.Fatalf("ack: %s", ack)
			}
			srv.NotifyToolsChanged()
			if n := b.recv(t); n != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5}}}` {
				t.Fatalf("list_changed: %s", n)
			}
			if n := a.recv(t); n != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
				t.Fatalf("legacy list_changed: %s", n)
			}
			c.quiet(t, 100*time.Millisecond) // neither initialized nor subscribed

			// Progress and a log message only when asked, before the answer.
			b.send(t, line26("6", "tools/call", `"name":"report","arguments":{}`, ""))
			if r := b.recv(t); !strings.HasPrefix(r, `{"jsonrpc":"2.0","id":6,"result":{"resultType":"complete"`) {
				t.Fatalf("unasked call: %s", r)
			}
			b.send(t, line26("7", "tools/call", `"name":"report","arguments":{}`, `"progressToken":70,"io.modelcontextprotocol/logLevel":"info"`))
			if p := b.recv(t); p != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":70,"progress":1,"message":"started"}}` {
				t.Fatalf("progress: %s", p)
			}
			if m := b.recv(t); !strings.Contains(m, `"method":"notifications/message"`) || !strings.Contains(m, `"data":"working"`) {
				t.Fatalf("log message: %s", m)
			}
			if r := b.recv(t); !strings.HasPrefix(r, `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete"`) {
				t.Fatalf("answer: %s", r)
			}
			if row, _ := audit.Last(); row.Transport != name {
				t.Errorf("audit transport %q", row.Transport)
			}

			// Cancel a stateless call on the stream: no answer, audited cancelled.
			before := rt.cancelled.Load()
			b.send(t, line26(`"slow"`, "tools/call", `"name":"report","arguments":{"tag":"slow"}`, ""))
			deadline := time.Now().Add(5 * time.Second)
			for {
				if row, o := audit.Last(); row.RequestID == `"slow"` && o == "" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the slow call did not start")
				}
				time.Sleep(2 * time.Millisecond)
			}
			b.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}`)
			b.send(t, line26("8", "tools/list", "", ""))
			if r := b.recv(t); !strings.HasPrefix(r, `{"jsonrpc":"2.0","id":8,`) {
				t.Fatalf("after cancel: %s", r)
			}
			for rt.cancelled.Load() == before || func() bool { _, o := audit.Last(); return o != chain.OutcomeCancelled }() {
				if time.Now().After(deadline) {
					t.Fatal("the cancel did not reach the tool and the audit row")
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
}
