package client

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/runstate"
)

// fakeDaemon serves a unix socket and answers each request line with what
// answer returns for its method (several lines allowed).
func fakeDaemon(t *testing.T, answer func(method, id string) []string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			line := sc.Text()
			if !strings.Contains(line, `"id":`) {
				continue
			}
			id := line[strings.Index(line, `"id":`)+5:]
			id = id[:strings.IndexAny(id, ",}")]
			method := line[strings.Index(line, `"method":"`)+10:]
			method = method[:strings.IndexByte(method, '"')]
			for _, a := range answer(method, id) {
				c.Write([]byte(strings.ReplaceAll(a, "ID", id) + "\n"))
			}
		}
	}()
	return path
}

// TestUnixConnDecodesResponses: the socket client reads responses with the
// jsonrpc decoder: results and errors (with data) reach their call,
// notifications in between are skipped, and a response that fails the
// strict decoder but names its id fails that call with the reason instead
// of leaving it waiting.
func TestUnixConnDecodesResponses(t *testing.T) {
	path := fakeDaemon(t, func(method, id string) []string {
		switch method {
		case "ok":
			return []string{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, `{"jsonrpc":"2.0","id":ID,"result":{"v":1}}`}
		case "fails":
			return []string{`{"jsonrpc":"2.0","id":ID,"error":{"code":-32005,"message":"sandbox_violation","data":{"path":"../x"}}}`}
		case "garbled":
			return []string{`{"jsonrpc":"2.0","id":ID,"result":{"a":1,"A":2}}`}
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	u, err := dialUnix(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	res, err := u.Call(ctx, "ok", nil)
	if err != nil || string(res) != `{"v":1}` {
		t.Errorf("ok: %s, %v", res, err)
	}
	_, err = u.Call(ctx, "fails", nil)
	var re *RPCError
	if !errors.As(err, &re) || re.Code != -32005 || re.Message != "sandbox_violation" || string(re.Data) != `{"path":"../x"}` {
		t.Errorf("fails: %v, want the RPC error with its data", err)
	}
	_, err = u.Call(ctx, "garbled", nil)
	if err == nil || !strings.Contains(err.Error(), "could not be read") || ctx.Err() != nil {
		t.Errorf("garbled: %v, want a read error before the deadline", err)
	}
}

// TestHTTPConnDecodesRefusal: an HTTP refusal's body (an error response
// with id null) becomes an *RPCError carrying the status.
func TestHTTPConnDecodesRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"service unavailable: busy"}}`))
	}))
	defer srv.Close()
	h := &httpConn{bearer: &bearer{t: &runstate.Target{Addr: strings.TrimPrefix(srv.URL, "http://")}, hc: srv.Client()}}
	_, err := h.Call(context.Background(), "tools/call", nil)
	var re *RPCError
	if !errors.As(err, &re) || re.HTTPStatus != 503 || re.Code != -32603 {
		t.Errorf("refusal: %v, want an *RPCError with HTTP 503", err)
	}
}
