package mcp

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
)

// msgConn is a jsonrpc.Connection with no framing at all: messages are
// handed over already parsed, and written messages are collected. It does
// not implement jsonrpc.ReadAhead.
type msgConn struct {
	in     chan any // jsonrpc.Message or error
	mu     sync.Mutex
	out    []string
	wrote  chan struct{}
	closed chan struct{}
	once   sync.Once
}

func newMsgConn() *msgConn {
	return &msgConn{in: make(chan any, 16), wrote: make(chan struct{}, 64), closed: make(chan struct{})}
}

func (c *msgConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case v := <-c.in:
		if err, ok := v.(error); ok {
			return jsonrpc.Message{}, err
		}
		return v.(jsonrpc.Message), nil
	case <-c.closed:
		return jsonrpc.Message{}, jsonrpc.ErrClosed
	}
}

func (c *msgConn) Write(_ context.Context, msg []byte) error {
	c.mu.Lock()
	c.out = append(c.out, string(msg))
	c.mu.Unlock()
	c.wrote <- struct{}{}
	return nil
}

func (c *msgConn) Close() error      { c.once.Do(func() { close(c.closed) }); return nil }
func (c *msgConn) SessionID() string { return "" }

func (c *msgConn) next(t *testing.T) string {
	t.Helper()
	select {
	case <-c.wrote:
	case <-time.After(5 * time.Second):
		t.Fatal("no message written within 5s")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.out[0]
	c.out = c.out[1:]
	return m
}

// TestServeOverAnyConnection: the session needs only parsed messages: over
// a connection without lines or read-ahead it answers requests, a parse
// error the connection reports, and pushes notifications; it ends at
// io.EOF and closes the connection.
func TestServeOverAnyConnection(t *testing.T) {
	srv := testServer(&testChain{})
	s := srv.NewSession(&chain.Caller{Transport: "test", AuthMethod: "spawn", Kind: "local", Subject: "ws"}, SessionOptions{})
	c := newMsgConn()
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), c) }()

	c.in <- mustParse(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	if got := c.next(t); !strings.Contains(got, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %s", got)
	}
	c.in <- mustParse(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"k":"v"}}}`)
	if got := c.next(t); !strings.Contains(got, `"id":1`) || !strings.Contains(got, `"k":"v"`) {
		t.Fatalf("tools/call: %s", got)
	}
	c.in <- &jsonrpc.ParseError{ID: jsonrpc.IDFromRaw([]byte(`"bad"`)), Err: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: test")}
	if got := c.next(t); got != `{"jsonrpc":"2.0","id":"bad","error":{"code":-32600,"message":"invalid request: test"}}` {
		t.Fatalf("parse error answered %s", got)
	}
	srv.NotifyToolsChanged()
	if got := c.next(t); !strings.Contains(got, "notifications/tools/list_changed") {
		t.Fatalf("push: %s", got)
	}
	c.in <- io.EOF
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v, want nil at EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return at EOF")
	}
	select {
	case <-c.closed:
	default:
		t.Error("Serve returned without closing the connection")
	}
}

// TestServeCancelClosesConnection: cancelling Serve's context closes the
// connection, which is what interrupts a Read blocked on input.
func TestServeCancelClosesConnection(t *testing.T) {
	srv := testServer(&testChain{})
	s := srv.NewSession(&chain.Caller{AuthMethod: "spawn"}, SessionOptions{})
	c := newMsgConn()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, c) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve kept reading after its context ended")
	}
}

// TestOpensSession: only an initialize request starts an HTTP session; a
// notification or a batch carrying the name does not.
func TestOpensSession(t *testing.T) {
	for line, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`:   true,
		`{"jsonrpc":"2.0","method":"initialize"}`:                      false,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:                     false,
		`[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}]`: false,
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                         false,
	} {
		m := mustParse(t, line)
		if got := OpensSession(&m); got != want {
			t.Errorf("OpensSession(%s) = %v, want %v", line, got, want)
		}
	}
}
