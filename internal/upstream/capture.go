package upstream

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk client decodes a tools/call result into typed content, which
// would drop members it does not know and fail on a content type it does
// not know; clawd passes an upstream's result through as it came. So the
// stdio connection keeps the raw result of the requests made with a
// capture slot in their context: Write sees the request (with the id the
// SDK gave it) in that context, Read sees the response before the SDK
// decodes it.

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
	progress *progressRoutes // reports are delivered as they are read
	mu       sync.Mutex
	pending  map[jsonrpc.ID]*slot
	routes   map[jsonrpc.ID]*progressRoute // closed when the answer is read
}

func newCaptureConn(c mcp.Connection, progress *progressRoutes) *captureConn {
	return &captureConn{Connection: c, progress: progress, pending: map[jsonrpc.ID]*slot{}, routes: map[jsonrpc.ID]*progressRoute{}}
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		s, _ := ctx.Value(captureKey{}).(*slot)
		rt, _ := ctx.Value(routeKey{}).(*progressRoute)
		if s != nil || rt != nil {
			c.mu.Lock()
			if s != nil {
				c.pending[req.ID] = s
			}
			if rt != nil {
				c.routes[req.ID] = rt
			}
			c.mu.Unlock()
			err := c.Connection.Write(ctx, msg)
			if err != nil {
				c.mu.Lock()
				delete(c.pending, req.ID)
				delete(c.routes, req.ID)
				c.mu.Unlock()
			}
			return err
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && !req.IsCall() && req.Method == "notifications/progress" {
		c.progress.deliverRaw(req.Params)
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		s := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		rt := c.routes[resp.ID]
		delete(c.routes, resp.ID)
		c.mu.Unlock()
		if rt != nil {
			rt.close()
		}
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
			delete(c.routes, id)
		}
	}
	c.mu.Unlock()
}

type captureTransport struct {
	inner    mcp.Transport
	progress *progressRoutes
	conn     *captureConn // set by Connect
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = newCaptureConn(c, t.progress)
	return t.conn, nil
}
