package upstream

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk client decodes a result into typed values, which would drop
// members it does not know (a tool's schema keeps every byte in clawd's
// cache, so its definition can be pinned). So the stdio connection keeps
// the raw result of the requests made with a capture slot in their
// context (tools/list): Write sees the request (with the id the SDK gave
// it) in that context, Read sees the response before the SDK decodes it.
// tools/call does not go through the SDK on stdio at all (stdiocall.go);
// the Streamable HTTP client captures its raw results (capture_http.go).

type captureKey struct{}

// slot receives the raw result of the one request made with it.
type slot struct {
	mu  sync.Mutex
	raw []byte
}

func (s *slot) get() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw
}

func withCapture(ctx context.Context) (context.Context, *slot) {
	s := &slot{}
	return context.WithValue(ctx, captureKey{}, s), s
}

// captureConn wraps a connection to fill the slots.
type captureConn struct {
	mcp.Connection
	mu      sync.Mutex
	pending map[jsonrpc.ID]*slot
}

func newCaptureConn(c mcp.Connection) *captureConn {
	return &captureConn{Connection: c, pending: map[jsonrpc.ID]*slot{}}
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		if s, _ := ctx.Value(captureKey{}).(*slot); s != nil {
			c.mu.Lock()
			c.pending[req.ID] = s
			c.mu.Unlock()
			err := c.Connection.Write(ctx, msg)
			if err != nil {
				c.mu.Lock()
				delete(c.pending, req.ID)
				c.mu.Unlock()
			}
			return err
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		s := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if s != nil && resp.Error == nil {
			s.mu.Lock()
			s.raw = append([]byte(nil), resp.Result...)
			s.mu.Unlock()
		}
	}
	return msg, err
}

// forget drops a slot whose request will get no answer it waits for (the
// caller gave up); a late answer is then not captured.
func (c *captureConn) forget(s *slot) {
	c.mu.Lock()
	for id, x := range c.pending {
		if x == s {
			delete(c.pending, id)
		}
	}
	c.mu.Unlock()
}

type captureTransport struct {
	inner mcp.Transport
	conn  *captureConn // set by Connect
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = newCaptureConn(c)
	return t.conn, nil
}
