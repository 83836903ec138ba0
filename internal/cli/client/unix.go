package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/support/peercred"
)

// unixConn speaks NDJSON JSON-RPC on a unix socket through the same framing
// the daemon uses (jsonrpc.Stream). A reader goroutine routes responses to
// the waiting calls, so a call can be cancelled while it waits.
type unixConn struct {
	c      net.Conn
	st     *jsonrpc.Stream
	mu     sync.Mutex
	nextID int64
	wait   map[string]chan result
	err    error // set when the reader stopped
	done   chan struct{}
}

// result is what the reader hands a waiting call: the decoded response, or
// why the daemon's answer to it could not be read.
type result struct {
	msg jsonrpc.Message
	err error
}

// maxUnixResponse bounds one line the CLI reads from the socket.
const maxUnixResponse = 256 << 20

func dialUnix(ctx context.Context, path string) (*unixConn, error) {
	c, err := peercred.Dial(ctx, path) // the daemon must be this user's before anything is sent
	if err != nil {
		return nil, err
	}
	u := &unixConn{c: c, st: jsonrpc.NewStream(c, c, maxUnixResponse), wait: map[string]chan result{}, done: make(chan struct{})}
	go u.read()
	return u, nil
}

func (u *unixConn) setVersion(string) {}

func (u *unixConn) read() {
	var err error
loop:
	for {
		m, rerr := u.st.Read(context.Background())
		var perr *jsonrpc.ParseError
		switch {
		case rerr == nil:
			if m.IsResponse && !m.ID.IsZero() && m.ID.Raw()[0] != '"' { // the CLI's ids are numbers
				u.deliver(m.ID.Raw(), result{msg: m})
			}
			continue // notifications (tools/list_changed) and anything else
		case errors.As(rerr, &perr) && perr.TooLarge:
			err = fmt.Errorf("the daemon sent a message over %d bytes", maxUnixResponse)
		case errors.As(rerr, &perr):
			// A response whose id could be read still answers its call.
			if !perr.ID.IsZero() {
				u.deliver(perr.ID.Raw(), result{err: fmt.Errorf("the daemon's response could not be read: %s", perr.Err.Message)})
			}
			continue
		case rerr == io.EOF:
			err = errors.New("the daemon closed the connection")
		default:
			err = rerr
		}
		break loop
	}
	u.mu.Lock()
	u.err = err
	u.mu.Unlock()
	close(u.done)
}

// deliver hands a response to the call waiting for id, if any.
func (u *unixConn) deliver(id string, r result) {
	u.mu.Lock()
	ch := u.wait[id]
	delete(u.wait, id)
	u.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

func (u *unixConn) write(b []byte) error {
	return u.st.Write(context.Background(), b)
}

func (u *unixConn) Call(ctx context.Context, method string, params any) (jsontext.Value, error) {
	u.mu.Lock()
	u.nextID++
	id := u.nextID
	ch := make(chan result, 1)
	u.wait[strconv.FormatInt(id, 10)] = ch
	u.mu.Unlock()
	b, err := request(id, method, params)
	if err != nil {
		return nil, err
	}
	if err := u.write(b); err != nil {
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return responseValue(&r.msg)
	case <-u.done:
		u.mu.Lock()
		defer u.mu.Unlock()
		return nil, u.err
	case <-ctx.Done():
		u.notify(context.Background(), "notifications/cancelled", cancelParams(id, ctx.Err().Error()))
		return nil, ctx.Err()
	}
}

func (u *unixConn) notify(_ context.Context, method string, params any) error {
	b, err := request(-1, method, params)
	if err != nil {
		return err
	}
	return u.write(b)
}

func (u *unixConn) Close() error { return u.c.Close() }
