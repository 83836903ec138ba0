package transport

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// holdIdle opens n connections to addr that never send a byte and keeps
// them until the test ends. The server may close them; they are not read.
// It may run on another goroutine than the test's.
func holdIdle(t *testing.T, network, addr string, n int) {
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.DialTimeout(network, addr, 5*time.Second)
		if err != nil {
			t.Errorf("idle connection %d: %v", len(conns), err)
			return
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
}

func p99(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)*99+99)/100-1]
}

// countLines counts the log lines in s.
func countLines(s string) int { return strings.Count(s, "\n") }

// TestIdleConnectionsDoNotLockOut: 2,000 connections that never send a
// byte, well over the 128-connection cap, neither keep /health from
// answering new connections nor authenticated clients from calling tools,
// and they cost the log a summary line, not a line each. Before shedding,
// the 129th connection and every one after got 503 (and a log line) until
// the idle ones timed out.
func TestIdleConnectionsDoNotLockOut(t *testing.T) {
	const idle, rounds = 2000, 300
	clawdtest.RaiseFDLimit(t, 2*idle+512)
	f := startHTTP(t, nil)
	addr := strings.TrimPrefix(f.base, "http://")
	sid := f.initialize()
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`
	linesBefore := countLines(f.log.String())

	holdIdle(t, "tcp", addr, idle)
	// A monitor that connects anew for each probe (the hard case: every
	// probe needs a slot) while the 2,000 are held. The burst of connects
	// itself is TestConnectFlood's.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var health, calls []time.Duration
	for i := range rounds {
		start := time.Now()
		resp, err := fresh.Get(f.base + PathHealth)
		if err != nil {
			t.Fatalf("health %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		health = append(health, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("health %d: HTTP %d", i, resp.StatusCode)
		}
		start = time.Now()
		r, body := f.do(req{body: call, headers: map[string]string{HeaderSessionID: sid}})
		calls = append(calls, time.Since(start))
		if r.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result"`) {
			t.Fatalf("tools/call %d: HTTP %d %s", i, r.StatusCode, body)
		}
	}
	// A new authenticated connection gets in too.
	other := &http.Client{Transport: &http.Transport{}}
	defer other.CloseIdleConnections()
	for i := range 20 {
		hr, _ := http.NewRequest(http.MethodPost, f.base+PathMCP, strings.NewReader(call))
		hr.Header.Set("Authorization", "Bearer "+testToken)
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set(HeaderSessionID, sid)
		start := time.Now()
		resp, err := other.Do(hr)
		if err != nil {
			t.Fatalf("new client, call %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		calls = append(calls, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("new client, call %d: HTTP %d", i, resp.StatusCode)
		}
	}
	t.Logf("with %d idle connections held: GET /health p99 %v (new connection each), tools/call p99 %v",
		idle, p99(health), p99(calls))
	// About a millisecond, 10 ms under -race on a loaded machine; a
	// client locked out until an idle connection's header timeout (5 s)
	// ended would wait ten times the bound.
	const slow = 500 * time.Millisecond
	if p := p99(health); p > slow {
		t.Errorf("GET /health p99 %v, want < %v", p, slow)
	}
	if p := p99(calls); p > slow {
		t.Errorf("tools/call p99 %v, want < %v", p, slow)
	}
	if n := f.h.conns.len(); n > f.h.MaxConns {
		t.Errorf("%d connections open, over the cap of %d", n, f.h.MaxConns)
	}
	log := f.log.String()
	if n := countLines(log) - linesBefore; n > 3 {
		t.Errorf("the log grew by %d lines, want a summary (at most 3):\n%s", n, log)
	}
	if !strings.Contains(log, "shed_unauthenticated=") {
		t.Errorf("no summary of the shed connections in the log:\n%s", log)
	}
}

// TestHeaderTimeoutCountsFromAccept: a connection must send a complete
// request head within the header timeout of its accept: sending nothing,
// or trickling bytes, does not buy more time, also not across the lane's
// hand-off to net/http. Later heads on a kept-alive connection get the
// timeout from their first byte.
func TestHeaderTimeoutCountsFromAccept(t *testing.T) {
	if readHeaderTimeout > 5*time.Second {
		t.Errorf("the default header timeout is %v; it must be 5 s or less", readHeaderTimeout)
	}
	h := &HTTPServer{}
	h.init()
	if h.timeouts.readHeader > 5*time.Second || h.timeouts.readHeader <= 0 {
		t.Errorf("an HTTPServer's header timeout is %v; want (0, 5s]", h.timeouts.readHeader)
	}

	const limit = 1500 * time.Millisecond
	f := startHTTP(t, func(h *HTTPServer) {
		h.timeouts = timeouts{readHeader: limit}
		h.connLogEvery = time.Hour // one line at the first event, then none
	})
	// closedAfter waits delay, writes prefix, then trickles a byte of
	// trickle every 50 ms (cycling; nothing ever completes a head), and
	// returns how long after start the server closed the connection.
	closedAfter := func(t *testing.T, c net.Conn, start time.Time, delay time.Duration, prefix, trickle string) time.Duration {
		t.Helper()
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-stop:
				return
			case <-time.After(delay):
			}
			if prefix != "" {
				io.WriteString(c, prefix)
			}
			for i := 0; trickle != ""; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := io.WriteString(c, trickle[i%len(trickle):i%len(trickle)+1]); err != nil {
					return
				}
			}
		}()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatal("the server kept the connection open for 10 s")
				}
				return time.Since(start)
			}
		}
	}
	// Each case waits 3 s before its first byte, so a timeout that counted
	// from the first byte, or started again at the hand-off to net/http,
	// would close the connection 3 s later than the bound: the upper
	// bounds below leave 2 s for a loaded machine and still catch that.
	const late = 3 * time.Second
	cases := []struct {
		name            string
		prefix, trickle string
	}{
		{"silent", "", ""},
		{"trickled head (lane)", "GET /health HTTP/1.1\r\n", "X-A: b\r\n"},
		// A bare-LF line is net/http's to parse: the lane hands the
		// connection over when it arrives (after 0.75 s of trickling here).
		{"trickled head (net/http)", "GET /x HTTP/1.1\r\n", "X-Abcdefgh: 1\nY: 2\r\n"},
	}
	t.Run("group", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				c := f.dialRaw()
				d := closedAfter(t, c, start, late, tc.prefix, tc.trickle)
				if d < limit-100*time.Millisecond || d > limit+2*time.Second {
					t.Errorf("closed %v after connecting; want about %v (the header timeout)", d.Round(time.Millisecond), limit)
				}
			})
		}
		t.Run("later head on a kept-alive connection", func(t *testing.T) {
			t.Parallel()
			c := f.dialRaw()
			br := bufio.NewReader(c)
			if resp, _ := rawExchange(t, c, br, getHealth); resp.StatusCode != 200 {
				t.Fatalf("HTTP %d", resp.StatusCode)
			}
			c.SetDeadline(time.Time{})
			// Idle between requests is not the head's time.
			start := time.Now()
			d := closedAfter(t, c, start, limit+200*time.Millisecond, "GET /health HTTP/1.1\r\n", "X-A: b\r\n")
			if d < 2*limit+100*time.Millisecond || d > 2*limit+200*time.Millisecond+2*time.Second {
				t.Errorf("closed %v after the last answer; want about %v (its head began %v after it)",
					d.Round(time.Millisecond), 2*limit+200*time.Millisecond, limit+200*time.Millisecond)
			}
		})
	})
	if log := f.log.String(); !strings.Contains(log, "head_timeout=") || countLines(log) > 2 {
		t.Errorf("want the header timeouts in one summary line:\n%s", log)
	}
}

// isClosed reports whether the server closed c within d.
func isClosed(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

// oneConnClient is an HTTP client that uses one kept-alive connection.
func oneConnClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func (f *httpFixture) postWith(hc *http.Client, sid, body string) (int, string) {
	f.t.Helper()
	hr, _ := http.NewRequest(http.MethodPost, f.base+PathMCP, strings.NewReader(body))
	hr.Header.Set("Authorization", "Bearer "+testToken)
	hr.Header.Set("Content-Type", "application/json")
	if sid != "" {
		hr.Header.Set(HeaderSessionID, sid)
	}
	resp, err := hc.Do(hr)
	if err != nil {
		f.t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if sid == "" {
		sid = resp.Header.Get(HeaderSessionID)
	}
	return resp.StatusCode, sid + " " + string(b)
}

// waitConns waits until the server counts n open connections.
func (f *httpFixture) waitConns(n int) {
	f.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); f.h.conns.len() != n; {
		if time.Now().After(deadline) {
			f.t.Fatalf("%d connections open, want %d", f.h.conns.len(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitIdleAuthed waits until n connections are authenticated and between
// requests: net/http marks a connection idle from its own goroutine, which
// may run after the client has read the answer.
func (f *httpFixture) waitIdleAuthed(n int) {
	f.t.Helper()
	count := func() int {
		f.h.conns.mu.Lock()
		defer f.h.conns.mu.Unlock()
		k := 0
		for c := range f.h.conns.conns {
			if c.authed.Load() && c.state.Load() == connIdle {
				k++
			}
		}
		return k
	}
	for deadline := time.Now().Add(5 * time.Second); count() != n; {
		if time.Now().After(deadline) {
			f.t.Fatalf("%d authenticated connections between requests, want %d", count(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestShedOrder: at the cap a new connection is admitted in place of, in
// this order: the unauthenticated connection idle the longest (never sent
// a request, or between requests), an authenticated connection between
// requests; with every slot running an authenticated request it gets 503.
// Each step is counted in the summary line.
func TestShedOrder(t *testing.T) {
	t.Run("unauthenticated first, longest idle first", func(t *testing.T) {
		f := startHTTP(t, func(h *HTTPServer) { h.MaxConns = 3; h.connLogEvery = 20 * time.Millisecond })
		authed := oneConnClient(t)
		if st, out := f.postWith(authed, "", initBody); st != 200 {
			t.Fatalf("initialize: %d %s", st, out)
		}
		silent := f.dialRaw() // never sends: idle since its accept
		polled := f.dialRaw()
		pbr := bufio.NewReader(polled)
		rawExchange(t, polled, pbr, getHealth) // idle since this answer
		f.waitConns(3)

		d := f.dialRaw()
		if !isClosed(silent, 3*time.Second) {
			t.Fatal("the connection that never sent a byte was not shed first")
		}
		if resp, _ := rawExchange(t, polled, pbr, getHealth); resp.StatusCode != 200 {
			t.Fatalf("polled connection: HTTP %d", resp.StatusCode)
		}
		// Now d (idle since its accept) has waited longer than polled.
		f.dialRaw()
		if !isClosed(d, 3*time.Second) {
			t.Fatal("the unauthenticated connection idle the longest was not shed")
		}
		if resp, _ := rawExchange(t, polled, pbr, getHealth); resp.StatusCode != 200 {
			t.Fatalf("polled connection after the second shed: HTTP %d", resp.StatusCode)
		}
		if f.h.conns.len() != 3 {
			t.Errorf("%d connections counted, want 3", f.h.conns.len())
		}
		f.waitLog("shed_unauthenticated=2")
	})
	t.Run("authenticated between requests, then refuse", func(t *testing.T) {
		f := startHTTP(t, func(h *HTTPServer) { h.MaxConns = 2; h.connLogEvery = 20 * time.Millisecond })
		busy, idle := oneConnClient(t), oneConnClient(t)
		_, out := f.postWith(busy, "", initBody)
		sid, _, _ := strings.Cut(out, " ")
		f.postWith(idle, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		done := make(chan int, 1)
		go func() {
			st, _ := f.postWith(busy, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
			done <- st
		}()
		<-f.bt.started
		f.waitConns(2)
		f.waitIdleAuthed(1)

		// The new connection takes the idle authenticated one's slot.
		c := f.dialRaw()
		f.waitLog("shed_idle_authenticated=1")
		br := bufio.NewReader(c)
		if resp, _ := rawExchange(t, c, br, getHealth); resp.StatusCode != 200 {
			t.Fatalf("new connection: HTTP %d", resp.StatusCode)
		}
		// The running call keeps its slot; the next connection replaces c
		// (unauthenticated).
		f.dialRaw()
		if !isClosed(c, 3*time.Second) {
			t.Fatal("the unauthenticated connection was not shed")
		}
		// A second running call: no slot may be shed, and a new connection
		// gets 503.
		f.waitConns(2)
		// A fresh client: idle's pooled connection was shed above, and a
		// POST is not retried on a new one when the old turns out dead.
		second := oneConnClient(t)
		go func() {
			st, _ := f.postWith(second, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
			done <- st
		}()
		<-f.bt.started
		f.waitConns(2)
		r := f.dialRaw()
		r.SetReadDeadline(time.Now().Add(3 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(r), nil)
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("with every slot running a call: %v, %v; want 503", resp, err)
		}
		f.waitLog("refused=1")
		if f.bt.cancelled.Load() != 0 {
			t.Error("a running call was cancelled to make room")
		}
		// Clean-up, not a check: with both slots still running calls this
		// connection may itself be refused (503 written at accept, which
		// the client can read as an unsolicited answer and fail on); the
		// fixture's shutdown then cancels the calls.
		hr, _ := http.NewRequest(http.MethodPost, f.base+PathMCP,
			strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`))
		hr.Header.Set("Authorization", "Bearer "+testToken)
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set(HeaderSessionID, sid)
		if resp, err := oneConnClient(t).Do(hr); err == nil {
			resp.Body.Close()
		}
	})
}

// logTotal sums the counter name over the summary lines in log.
func logTotal(log, name string) int {
	total := 0
	for _, f := range strings.Fields(log) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			var n int
			fmt.Sscan(v, &n)
			total += n
		}
	}
	return total
}

// waitLog waits until the summary lines count want (name=N) in all.
func (f *httpFixture) waitLog(want string) {
	f.t.Helper()
	name, v, _ := strings.Cut(want, "=")
	var n int
	fmt.Sscan(v, &n)
	for deadline := time.Now().Add(5 * time.Second); logTotal(f.log.String(), name) != n; {
		if time.Now().After(deadline) {
			f.t.Fatalf("the log does not count %s:\n%s", want, f.log)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestUnauthenticatedSlowBodyIsNotWaitedFor: a request refused before its
// body is read closes the connection with the answer; net/http would
// otherwise read the rest of the body, as slowly as it comes, for up to the
// read timeout (30 s) before answering, holding the slot.
func TestUnauthenticatedSlowBodyIsNotWaitedFor(t *testing.T) {
	f := startHTTP(t, nil)
	c := f.dialRaw()
	fmt.Fprint(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer while the body trickles: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusForbidden || !resp.Close {
		t.Errorf("HTTP %d, close %v; want 403 and Connection: close", resp.StatusCode, resp.Close)
	}
	if !isClosed(c, 3*time.Second) {
		t.Error("the connection stayed open")
	}
	// A complete authenticated request keeps its connection.
	r, _ := f.do(req{body: initBody})
	if r.Close {
		t.Error("an authenticated request with its body read closed the connection")
	}
}

// TestConnectFlood: connections opened and dropped as fast as two
// goroutines can, far faster than the 5 s header timeout lets any go,
// while a monitor polls /health on a new connection each time and an
// authenticated client calls a tool. Each new connection takes the place
// of the one idle the longest, so a new client is the last to go and has
// cap/rate to send its request (a few ms here); the flood shares this
// process and its two cores with the clients, so a probe can miss that
// window. Before shedding every probe got 503.
func TestConnectFlood(t *testing.T) {
	const rounds = 60
	clawdtest.RaiseFDLimit(t, 4096)
	f := startHTTP(t, nil)
	addr := strings.TrimPrefix(f.base, "http://")
	sid := f.initialize()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened [2]int
	for g := range opened {
		wg.Go(func() {
			var held []net.Conn
			defer func() {
				for _, c := range held {
					c.Close()
				}
			}()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					continue
				}
				opened[g]++
				held = append(held, c)
				if len(held) > 400 {
					held[0].Close()
					held = held[1:]
				}
			}
		})
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var health, calls []time.Duration
	failed := 0
	for range rounds {
		start := time.Now()
		resp, err := fresh.Get(f.base + PathHealth)
		if err != nil || resp.StatusCode != 200 {
			failed++
			t.Logf("health probe: %v", err)
		} else {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		health = append(health, time.Since(start))
		start = time.Now()
		r, _ := f.do(req{body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
			headers: map[string]string{HeaderSessionID: sid}})
		calls = append(calls, time.Since(start))
		if r.StatusCode != 200 {
			t.Fatalf("tools/call: HTTP %d", r.StatusCode)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d connections opened by the flood; /health on new connections: %d of %d failed, p99 %v; tools/call p99 %v",
		opened[0]+opened[1], failed, rounds, p99(health), p99(calls))
	if failed > rounds/10 {
		t.Errorf("%d of %d health probes on new connections failed", failed, rounds)
	}
	if n := f.h.conns.len(); n > f.h.MaxConns {
		t.Errorf("%d connections open, over the cap of %d", n, f.h.MaxConns)
	}
	if l := countLines(f.log.String()); l > 4 {
		t.Errorf("%d log lines:\n%s", l, f.log)
	}
}

// TestRefusedRequestsAreSummarized: requests the Host check refuses, sent
// as fast as a client can, log the first in full and the rest as counts in
// a summary line, not a line each.
func TestRefusedRequestsAreSummarized(t *testing.T) {
	const n, every = 300, time.Second
	f := startHTTP(t, func(h *HTTPServer) { h.connLogEvery = every })
	c := f.dialRaw()
	br := bufio.NewReader(c)
	start := time.Now()
	for range n {
		if resp, _ := rawExchange(t, c, br, "GET /health HTTP/1.1\r\nHost: evil.example.com\r\n\r\n"); resp.StatusCode != 403 {
			t.Fatalf("HTTP %d, want 403", resp.StatusCode)
		}
	}
	took := time.Since(start)
	time.Sleep(every + 200*time.Millisecond) // the summary line is due
	log := f.log.String()
	detail := strings.Count(log, "refused a request for a foreign Host")
	if detail < 1 || !strings.Contains(log, "host=evil.example.com") {
		t.Errorf("the first refusal was not logged with its Host:\n%s", log)
	}
	if got := detail + logTotal(log, "foreign_host"); got != n {
		t.Errorf("the log accounts for %d refusals, want %d:\n%s", got, n, log)
	}
	if lines, max := countLines(log), 2+int(took/every); lines > max {
		t.Errorf("%d log lines for %d refusals in %v, want at most %d:\n%s", lines, n, took, max, log)
	}
}

// TestSubscriptionsDoNotLockOut: a subscriptions/listen stream runs until
// the client ends it, so a token holder that opened one on every slot held
// the listener for as long as it liked: every new connection, /health's
// included, got 503. Tool calls cannot do that (max_concurrency answers
// 503 beyond its limit, far below the cap), subscriptions could. At the cap
// a subscription now gives way, after every idle connection, the one open
// the longest first; its client subscribes again.
func TestSubscriptionsDoNotLockOut(t *testing.T) {
	f := startHTTP(t, func(h *HTTPServer) { h.MaxConns = 3; h.connLogEvery = 20 * time.Millisecond })
	var streams []<-chan string
	for i := range 3 {
		resp := f.post(t, body26(fmt.Sprintf(`"L%d"`, i), "subscriptions/listen", `"notifications":{"toolsListChanged":true}`), h26("subscriptions/listen"))
		t.Cleanup(func() { resp.Body.Close() })
		ev := sseEvents(resp.Body)
		if ack := nextEvent(t, ev); !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
			t.Fatalf("subscription %d: %s", i, ack)
		}
		streams = append(streams, ev)
	}
	f.waitConns(3)

	c := f.dialRaw()
	if resp, _ := rawExchange(t, c, bufio.NewReader(c), getHealth); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health with every slot holding a subscription: HTTP %d, want 200", resp.StatusCode)
	}
	f.waitLog("shed_subscription=1")
	// The oldest subscription gave way; the others still get their
	// notifications.
	select {
	case e, ok := <-streams[0]:
		if ok {
			t.Fatalf("the oldest subscription got %s; want its stream closed", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the oldest subscription's stream is still open")
	}
	f.h.Server.NotifyToolsChanged()
	for i, ev := range streams[1:] {
		if e := nextEvent(t, ev); !strings.Contains(e, "notifications/tools/list_changed") {
			t.Errorf("subscription %d: %s", i+1, e)
		}
	}
	// The shed subscription ended in the server too (its request's
	// context ended with the connection): it holds no goroutine and no
	// place among the server's subscriptions.
	for deadline := time.Now().Add(5 * time.Second); ; {
		buf := make([]byte, 1<<20)
		n := strings.Count(string(buf[:runtime.Stack(buf, true)]), "mcp.(*Server).listen(")
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions still served, want 2", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
