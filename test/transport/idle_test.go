//go:build linux || darwin

package transport_e2e

import (
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

func p99(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)*99+99)/100-1]
}

// TestIdleConnectionsDoNotLockOut: with 2,000 connections that never send
// a byte held against `clawd serve --transport tcp_loopback` (cap 128),
// /health on a new connection each time and an authenticated tools/call
// are answered with p99 under 50 ms, and the daemon's log grows by a
// summary line, not a line per connection.
func TestIdleConnectionsDoNotLockOut(t *testing.T) {
	const idle, rounds = 2000, 200
	clawdtest.RaiseFDLimit(t, idle+512)
	e := newEnv(t)
	d := e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.State("tcp")
	base := "http://" + st.Addr
	s := clawdtest.NewHTTP(t, st.Addr, clawdtest.ReadToken(t, st.TokenFile))
	s.Initialize(initMsg)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`
	if code, body := s.Post(call); code != 200 || !strings.Contains(body, "hello") {
		t.Fatalf("tools/call before: HTTP %d %s", code, body)
	}
	logBefore := strings.Count(d.Stderr.String(), "\n")

	conns := make([]net.Conn, 0, idle)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range idle {
		c, err := net.DialTimeout("tcp", st.Addr, 5*time.Second)
		if err != nil {
			t.Fatalf("idle connection %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var health, calls []time.Duration
	for i := range rounds {
		start := time.Now()
		resp, err := fresh.Get(base + "/health")
		if err != nil {
			t.Fatalf("health %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		health = append(health, time.Since(start))
		if resp.StatusCode != 200 {
			t.Fatalf("health %d: HTTP %d", i, resp.StatusCode)
		}
		start = time.Now()
		code, body := s.Post(call)
		calls = append(calls, time.Since(start))
		if code != 200 || !strings.Contains(body, "hello") {
			t.Fatalf("tools/call %d: HTTP %d %s", i, code, body)
		}
	}
	t.Logf("with %d idle connections held: GET /health p99 %v (new connection each), tools/call read_file p99 %v",
		idle, p99(health), p99(calls))
	if p := p99(health); p > 50*time.Millisecond {
		t.Errorf("GET /health p99 %v, want < 50ms", p)
	}
	if p := p99(calls); p > 50*time.Millisecond {
		t.Errorf("tools/call p99 %v, want < 50ms", p)
	}
	log := d.Stderr.String()
	grown := strings.Split(log, "\n")[logBefore:]
	if n := len(grown) - 1; n > 3 {
		t.Errorf("the log grew by %d lines while %d connections were held, want a summary line:\n%s", n, idle, strings.Join(grown, "\n"))
	}
	if !strings.Contains(log, "shed_unauthenticated=") {
		t.Errorf("no summary line of the shed connections:\n%s", strings.Join(grown, "\n"))
	}
}
