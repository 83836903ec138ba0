package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// unixConn speaks NDJSON JSON-RPC on a unix socket. A reader goroutine
// routes responses to the waiting calls, so a call can be cancelled while
// it waits.
type unixConn struct {
	c      net.Conn
	wmu    sync.Mutex
	mu     sync.Mutex
	nextID int64
	wait   map[string]chan *response
	err    error // set when the reader stopped
	done   chan struct{}
}

func dialUnix(ctx context.Context, path string) (*unixConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	u := &unixConn{c: c, wait: map[string]chan *response{}, done: make(chan struct{})}
	go u.read()
	return u, nil
}

func (u *unixConn) setVersion(string) {}

func (u *unixConn) read() {
	sc := bufio.NewScanner(u.c)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	var err error
	for sc.Scan() {
		var r response
		if json.Unmarshal(sc.Bytes(), &r, json.RejectUnknownMembers(false)) != nil || len(r.ID) == 0 || r.ID.Kind() != '0' {
			continue // notifications (tools/list_changed) and anything else
		}
		u.mu.Lock()
		ch := u.wait[string(r.ID)]
		delete(u.wait, string(r.ID))
		u.mu.Unlock()
		if ch != nil {
			ch <- &r
		}
	}
	if err = sc.Err(); err == nil {
		err = errors.New("the daemon closed the connection")
	}
	u.mu.Lock()
	u.err = err
	u.mu.Unlock()
	close(u.done)
}

func (u *unixConn) write(b []byte) error {
	u.wmu.Lock()
	defer u.wmu.Unlock()
	_, err := u.c.Write(append(b, '\n'))
	return err
}

func (u *unixConn) Call(ctx context.Context, method string, params any) (jsontext.Value, error) {
	u.mu.Lock()
	u.nextID++
	id := u.nextID
	ch := make(chan *response, 1)
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
		return r.value()
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
