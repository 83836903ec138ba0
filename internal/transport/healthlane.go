package transport

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// healthLane sits between the TCP listener and net/http. It answers the
// plain GET and HEAD /health requests that monitors, hooks and IDE plugins
// send on keep-alive connections straight off the connection, and hands
// the connection, with every byte it has read, to net/http at the first
// request that is anything else.
//
// Why: /health's target is p99 < 1 ms with 32 clients on a 2-core machine.
// net/http adds a fixed cost to each keep-alive round trip there (a
// background read goroutine, header maps, deadlines), enough that a bare
// net/http server misses the target at saturation while nginx meets it;
// the lane's own work is a small fraction of it (docs/benchmarks.md,
// "Health endpoint", has the figures).
//
// The lane only ever says yes. A request it does not recognise exactly
// (another path or method, a query, a body, Expect, Upgrade, Connection,
// bare-LF line ends, a head over the buffer, HTTP/1.0, an Origin or Host it
// would refuse) goes to net/http, so every refusal, with its status code and
// its log line, still comes from HTTPServer.ServeHTTP. The lane applies the
// same checks before answering: loopback peer, Host, Origin.
type healthLane struct {
	h  *HTTPServer
	ln net.Listener // the TCP listener; h.conns decides who stays

	handoff chan net.Conn // connections for net/http, taken by Accept
	done    chan struct{} // closed by Close
	once    sync.Once

	err   error // why the listener stopped; read after done is closed
	mu    sync.Mutex
	conns map[net.Conn]struct{} // connections the lane holds
}

// laneBufSize bounds a request head the lane will parse; bigger heads go to
// net/http (whose limit is maxHeaderBytes).
const laneBufSize = 4 << 10

func newHealthLane(h *HTTPServer, ln net.Listener) *healthLane {
	return &healthLane{
		h: h, ln: ln,
		handoff: make(chan net.Conn),
		done:    make(chan struct{}),
		conns:   map[net.Conn]struct{}{},
	}
}

// run accepts connections until the listener fails for good or closes;
// net/http's Serve then returns the listener's error.
func (l *healthLane) run() {
	backoff := acceptBackoff{log: l.h.Logger}
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if backoff.wait(err, l.done) {
				continue
			}
			l.close(err)
			return
		}
		backoff.reset()
		tc, rank, ok := l.h.conns.admit(c)
		switch rank {
		case rankIdleAuthed:
			l.h.connLog.add(evShedIdleAuthed)
		case rankListening:
			l.h.connLog.add(evShedListening)
		case rankBusyUnauthed, rankIdleUnauthed:
			l.h.connLog.add(evShedUnauthed)
		}
		if !ok {
			l.h.connLog.add(evRefused)
			refuseBusy(c)
			continue
		}
		go l.serve(tc)
	}
}

var busyResponse = func() []byte {
	body := `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"service unavailable: too many open connections"}}`
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// refuseBusy answers a connection the table has no room for with 503 and
// closes it. A fresh socket's send buffer is empty, so the write does not
// wait; the deadline is there in case it would.
func refuseBusy(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(busyResponse)
	c.Close()
}

// Accept, Close and Addr make the lane net/http's listener.
func (l *healthLane) Accept() (net.Conn, error) {
	select {
	case c := <-l.handoff:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

// Close stops accepting and closes every connection the lane still holds;
// connections already handed off belong to net/http's Shutdown.
func (l *healthLane) Close() error {
	l.close(net.ErrClosed)
	return nil
}

func (l *healthLane) close(err error) {
	l.once.Do(func() {
		l.err = err
		close(l.done)
		l.ln.Close()
		l.mu.Lock()
		for c := range l.conns {
			c.Close()
		}
		l.mu.Unlock()
	})
}

func (l *healthLane) Addr() net.Addr { return l.ln.Addr() }

func (l *healthLane) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.done:
		return false
	default:
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *healthLane) untrack(c net.Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// serve answers /health requests on c until one is not for the lane.
func (l *healthLane) serve(c *trackedConn) {
	if !l.track(c) {
		c.Close()
		return
	}
	if !loopbackPeer(c.RemoteAddr().String()) {
		l.pass(c, nil, time.Time{}) // net/http refuses it with 403 and logs it
		return
	}
	br := bufio.NewReaderSize(c, laneBufSize)
	var body, out []byte
	to := &l.h.timeouts
	// The first head must be complete within the header timeout of the
	// accept, however its bytes trickle in: a connection that sends nothing
	// gets no more than that either.
	headBy := c.accepted.Add(to.readHeader)
	c.SetReadDeadline(headBy)
	var deadline time.Time
	for first := true; ; first = false {
		if !first {
			// Between requests: the connection is idle from now on (the
			// table sheds those idle the longest first). The idle timeout
			// covers the wait for the next request and, as a write
			// deadline too, a client that stops reading its answers.
			// Moving a deadline costs timer work, so it moves only when it
			// has fallen behind by an eighth of the timeout (at most a
			// second).
			now := time.Now()
			c.idle(monoOf(now))
			if now.Add(to.idle).Sub(deadline) > min(to.idle/8, time.Second) {
				deadline = now.Add(to.idle)
				c.SetDeadline(deadline)
			}
			headBy = time.Time{}
		}
		head, st := readHead(br, c, to.readHeader, &headBy)
		switch st {
		case headNotOurs:
			l.pass(c, br, headBy)
			return
		case headTimedOut:
			l.h.connLog.add(evHeadTimeout)
			fallthrough
		case headGone:
			l.untrack(c)
			c.Close() // EOF, a timeout or a broken connection
			return
		}
		// A complete head is a request in progress: the table sheds such a
		// connection only after every idle one (its bytes have left the
		// socket, so it no longer looks like a client that has sent them).
		if !c.busy() {
			l.untrack(c)
			c.Close() // shed meanwhile
			return
		}
		isHead, ok := parseHealthRequest(head)
		if !ok {
			l.pass(c, br, time.Time{})
			return
		}
		if first || !headBy.IsZero() {
			// readHead set a read deadline for the head; go back to the idle
			// timeout for the write and the next wait.
			deadline = time.Now().Add(to.idle)
			c.SetDeadline(deadline)
		}
		br.Discard(len(head))
		hl := l.h.health()
		body = hl.AppendJSON(body[:0])
		out = appendHealthResponse(out[:0], body, isHead)
		// Counted before the write, so a client that has read the answer
		// (a test) always sees it counted.
		l.h.laneServed.Add(1)
		if _, err := c.Write(out); err != nil {
			l.untrack(c)
			c.Close()
			return
		}
	}
}

// pass hands c, with whatever br has buffered, to net/http. headBy, when
// set, is the time by which the head now arriving must be complete:
// net/http's own header timeout would start again at the hand-off, so a
// head that trickles across it could take twice as long.
func (l *healthLane) pass(c *trackedConn, br *bufio.Reader, headBy time.Time) {
	l.untrack(c)
	c.SetDeadline(time.Time{}) // net/http sets its own
	if !headBy.IsZero() {
		time.AfterFunc(time.Until(headBy), func() {
			if !c.headDone.Load() {
				l.h.connLog.add(evHeadTimeout)
				c.Close()
			}
		})
	}
	var hc net.Conn = c
	if br != nil && br.Buffered() > 0 {
		hc = &bufferedConn{Conn: c, r: br}
	}
	select {
	case l.handoff <- hc:
	case <-l.done:
		c.Close()
	}
}

// bufferedConn replays the bytes the lane read before reading c again.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) {
	if b.r.Buffered() > 0 {
		return b.r.Read(p)
	}
	return b.Conn.Read(p)
}

// headStatus is what readHead found.
type headStatus int

const (
	headRead     headStatus = iota // a complete head, CRLF line ends
	headNotOurs                    // too big for the buffer, or bare-LF lines
	headTimedOut                   // the head was due and did not finish in time
	headGone                       // EOF, idle timeout or a connection error
)

// readHead waits for a complete request head in br and returns it without
// consuming it. Once a request has begun, the rest of its head must arrive
// within headerTimeout (net/http's ReadHeaderTimeout): readHead then sets
// *headBy and the read deadline to it. A *headBy already set is the
// deadline in force (the caller's); more bytes never move it.
func readHead(br *bufio.Reader, c net.Conn, headerTimeout time.Duration, headBy *time.Time) ([]byte, headStatus) {
	for {
		if n := br.Buffered(); n > 0 {
			b, _ := br.Peek(n)
			if end := headEnd(b); end > 0 {
				return b[:end], headRead
			} else if end < 0 || n == laneBufSize {
				return nil, headNotOurs
			}
			if headBy.IsZero() {
				*headBy = time.Now().Add(headerTimeout)
				c.SetReadDeadline(*headBy)
			}
		}
		if _, err := br.Peek(br.Buffered() + 1); err != nil {
			if !headBy.IsZero() && errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, headTimedOut
			}
			return nil, headGone // EOF, the idle timeout or a broken connection
		}
	}
}

// headEnd returns the length of the head in b up to and including the
// blank line, 0 if the blank line has not arrived yet, and -1 if a line ends
// in a bare LF (net/http tolerates that; the lane leaves it to net/http).
func headEnd(b []byte) int {
	from := 0
	for {
		i := bytes.IndexByte(b[from:], '\n')
		if i < 0 {
			return 0
		}
		i += from
		if i == 0 || b[i-1] != '\r' {
			return -1
		}
		if i >= 3 && b[i-2] == '\n' {
			return i + 1 // "\r\n\r\n"
		}
		from = i + 1
	}
}

var (
	lineGetHealth  = []byte("GET " + PathHealth + " HTTP/1.1\r\n")
	lineHeadHealth = []byte("HEAD " + PathHealth + " HTTP/1.1\r\n")
)

// parseHealthRequest accepts exactly a GET or HEAD /health HTTP/1.1 request
// with no body whose Host and Origin the HTTP checks would accept. Anything
// else is not the lane's (ok false), including what net/http would refuse.
func parseHealthRequest(head []byte) (isHead, ok bool) {
	var rest []byte
	switch {
	case bytes.HasPrefix(head, lineGetHealth):
		rest = head[len(lineGetHealth):]
	case bytes.HasPrefix(head, lineHeadHealth):
		rest, isHead = head[len(lineHeadHealth):], true
	default:
		return false, false
	}
	hosts := 0
	for len(rest) > 2 { // the final "\r\n" ends the head
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i-1]
		rest = rest[i+1:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return false, false // obs-fold, a malformed field: net/http decides
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		if !validFieldValue(value) {
			return false, false
		}
		switch {
		case equalFold(name, "Host"):
			hosts++
			if hosts > 1 || !allowedHost(string(value)) {
				return false, false
			}
		case equalFold(name, "Origin"):
			if !allowedOrigin(string(value)) {
				return false, false
			}
		case equalFold(name, "Content-Length"):
			if string(value) != "0" {
				return false, false
			}
		case equalFold(name, "Transfer-Encoding"), equalFold(name, "Expect"),
			equalFold(name, "Upgrade"), equalFold(name, "Connection"):
			return false, false
		}
	}
	return isHead, hosts == 1
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		d := s[i]
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// isToken reports whether b is an RFC 9110 token (a field name).
func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validFieldValue reports whether a field value has no control characters
// but tab, as net/http requires (it answers 400 otherwise).
func validFieldValue(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// appendHealthResponse writes the response ServeHTTP gives GET /health:
// the same status and headers (canonical names, sorted as net/http sorts
// them), with Content-Length on HEAD too.
func appendHealthResponse(out, body []byte, isHead bool) []byte {
	out = append(out, "HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\nContent-Type: application/json\r\nDate: "...)
	out = appendDate(out)
	out = append(out, "\r\nX-Content-Type-Options: nosniff\r\n\r\n"...)
	if !isHead {
		out = append(out, body...)
	}
	return out
}

// httpDate caches the Date header value for the current second.
var httpDate atomic.Pointer[dateStamp]

type dateStamp struct {
	unix int64
	text []byte
}

func appendDate(out []byte) []byte {
	now := time.Now()
	d := httpDate.Load()
	if d == nil || d.unix != now.Unix() {
		d = &dateStamp{unix: now.Unix(), text: now.UTC().AppendFormat(nil, http.TimeFormat)}
		httpDate.Store(d)
	}
	return append(out, d.text...)
}
