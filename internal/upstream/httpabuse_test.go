//go:build unix

package upstream

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/race"
)

// abuseServer is a hand-made Streamable HTTP server on 127.0.0.1 that
// initializes and lists one tool, "get", and hands every other request to
// odd (the request's method, "" for GET, and its id), which reports
// whether it answered.
func abuseServer(t *testing.T, odd func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) bool) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method == http.MethodPost {
			json.NewDecoder(r.Body).Decode(&req)
		}
		if odd(w, r, req.Method, req.ID) {
			return
		}
		answer := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
		}
		switch {
		case r.Method == http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case r.Method != http.MethodPost:
		case len(req.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case req.Method == "initialize":
			answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"abuse","version":"1"}}`)
		case req.Method == "tools/list":
			answer(`{"tools":[{"name":"get","inputSchema":{"type":"object"}}]}`)
		case req.Method == "tools/call":
			answer(`{"content":[{"type":"text","text":"fine"}]}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"no"}}`)
		}
	}))
	t.Cleanup(ts.Close) // after the manager's Close (cleanups run last first)
	return ts
}

// endless writes chunk to w until limit bytes went out or the client went
// away, counting them in sent.
func endless(w http.ResponseWriter, chunk []byte, limit int64, sent *atomic.Int64) {
	w.(http.Flusher).Flush()
	for sent.Load() < limit {
		n, err := w.Write(chunk)
		sent.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// A tools/call answered with an error status whose Content-Type says
// event stream, and an endless body: the go-sdk client reads an error
// answer whole to find a JSON-RPC error in it, so that body is bounded
// like a JSON one whatever it claims to be.
func TestHTTPErrorStatusEventStreamIsBounded(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, _ json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusBadRequest)
		endless(w, bytes.Repeat([]byte("x"), 64<<10), 200<<20, &sent)
		return true
	})
	m, reg := newTestManager(t, Options{})
	cfg := httpCfg("errstream", ts.URL)
	cfg.ReadTimeout = 5 * time.Second
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "errstream")
	if _, err := call(t, reg, "errstream__get", `{}`); err == nil {
		t.Error("the call succeeded")
	}
	if got := sent.Load(); got > maxLine+8<<20 {
		t.Errorf("the server wrote %d MiB of an error answer before clawd stopped reading, want at most about %d MiB", got>>20, maxLine>>20)
	}
}

// The same on the standalone GET stream, which has no deadline at all: an
// error status other than the few the SDK takes as transient, with an
// event-stream Content-Type, is read whole by the SDK.
func TestHTTPStandaloneErrorStreamIsBounded(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64 // the most one GET wrote
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, _ json.RawMessage) bool {
		if r.Method != http.MethodGet {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusNotImplemented)
		var one atomic.Int64 // this GET's: the session fails and is made anew, each with its GET
		endless(w, bytes.Repeat([]byte("x"), 64<<10), 200<<20, &one)
		for cur := sent.Load(); one.Load() > cur && !sent.CompareAndSwap(cur, one.Load()); cur = sent.Load() {
		}
		return true
	})
	m, _ := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("geterr", ts.URL)})
	deadline := time.Now().Add(10 * time.Second)
	for sent.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := sent.Load(); got > maxLine+8<<20 {
		t.Errorf("the server wrote %d MiB on one GET stream before clawd stopped reading, want at most about %d MiB", got>>20, maxLine>>20)
	}
}

// gzipped is data repeated to n bytes, gzip-compressed.
func gzipped(t *testing.T, prefix, fill, suffix string, n int) []byte {
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	io.WriteString(z, prefix)
	chunk := []byte(strings.Repeat(fill, (64<<10)/len(fill)))
	for left := n; left > 0; left -= len(chunk) {
		z.Write(chunk)
	}
	io.WriteString(z, suffix)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A compression bomb: a small gzip body (Go's transport asked for gzip and
// inflates it on the way) that inflates past the answer limit is cut at
// the limit after inflating, a JSON answer or an event stream.
func TestHTTPGzipBomb(t *testing.T) {
	t.Parallel()
	const size = 256 << 20
	var jsonBomb, sseBomb []byte
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		var body string
		if strings.Contains(r.Header.Get("X-Case"), "sse") {
			w.Header().Set("Content-Type", "text/event-stream")
			body = string(sseBomb)
		} else {
			w.Header().Set("Content-Type", "application/json")
			body = string(jsonBomb)
		}
		w.Header().Set("Content-Encoding", "gzip")
		io.WriteString(w, body)
		return true
	})
	jsonBomb = gzipped(t, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"`, "x", `"}]}}`, size)
	sseBomb = gzipped(t, `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"`, "x", `"}]}}`+"\n\n", size)
	if len(jsonBomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes", len(jsonBomb))
	}
	// What says the answer was cut off at its limit rather than inflated
	// whole: the error names the limit it stopped at. The wall-clock bound
	// only guards against a call that hangs or inflates for long: it is
	// wide (5.6 s was seen on a 2-core machine at load 17) and scaled
	// under the race detector; the call takes about half a second here.
	wantErr := map[string]string{
		"json": errBodyTooLarge.Error(),
		"sse":  fmt.Sprintf("exceeded %d bytes", maxBody),
	}
	for _, c := range []string{"json", "sse"} {
		m, reg := newTestManager(t, Options{})
		cfg := httpCfg("bomb"+c, ts.URL)
		cfg.Headers = map[string]string{"X-Case": c}
		m.Apply(context.Background(), []ServerConfig{cfg})
		connected(t, m, cfg.Name)
		start := time.Now()
		res, err := call(t, reg, cfg.Name+"__get", `{}`)
		if err == nil || !strings.Contains(err.Error(), wantErr[c]) {
			t.Errorf("%s: a %d MiB answer once inflated: %T, %v; want an error containing %q", c, size>>20, res, err, wantErr[c])
		}
		if d := time.Since(start); d > 30*time.Second*race.Slowdown {
			t.Errorf("%s: the call took %v", c, d)
		}
		t.Logf("%s: %v", c, err)
	}
}

// A session id of a megabyte, different on every answer: what clawd keeps
// and shows of the server (the status's last error, events) stays small.
func TestHTTPSessionIDHuge(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, _ json.RawMessage) bool {
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("%d", n.Add(1))+strings.Repeat("s", 1<<20))
		return false
	})
	m, _ := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("bigid", ts.URL)})
	deadline := time.Now().Add(10 * time.Second)
	var st Status
	for time.Now().Before(deadline) {
		st, _ = m.StatusOf("bigid")
		if st.LastError != "" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.LastError == "" {
		t.Fatalf("no error: %+v", st.State)
	}
	if len(st.LastError) > 16<<10 || strings.Contains(st.LastError, strings.Repeat("s", 1000)) {
		t.Errorf("the last error holds %d bytes, the session id in it", len(st.LastError))
	}
	t.Logf("%.300s", st.LastError)
}

// A tools/call whose event stream goes on after the answer, for ever:
// once the call has returned, clawd stops reading that stream (the SDK
// drains a finished stream to its end, so only the call's context ends
// it).
func TestHTTPStreamGoesOnAfterTheAnswer(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	done := make(chan struct{})
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		defer close(done)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"fine"}]}}`)
		endless(w, []byte(": still here\n\n"), 1<<40, &sent)
		return true
	})
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("chatty", ts.URL)})
	connected(t, m, "chatty")
	if got := callText(t, reg, "chatty__get", `{}`); !strings.Contains(got, "fine") {
		t.Fatalf("call: %s", got)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Errorf("clawd still reads the stream 5 s after the call returned (%d MiB)", sent.Load()>>20)
	}
}

// The standalone GET stream sends one line without an end, for ever: the
// SDK gives up on the event at 16 MiB and the session fails, and the
// stream ends with the session (until then the SDK drains it, holding
// nothing).
func TestHTTPStandaloneEndlessLine(t *testing.T) {
	t.Parallel()
	var most atomic.Int64 // the most one GET wrote
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, _ json.RawMessage) bool {
		if r.Method != http.MethodGet {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		var one atomic.Int64
		io.WriteString(w, "data: ")
		endless(w, bytes.Repeat([]byte("x"), 64<<10), 1<<30, &one)
		for cur := most.Load(); one.Load() > cur && !most.CompareAndSwap(cur, one.Load()); cur = most.Load() {
		}
		return true
	})
	m, _ := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("longline", ts.URL)})
	deadline := time.Now().Add(10 * time.Second)
	for most.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := most.Load(); got == 0 || got >= 1<<30 {
		t.Errorf("the server wrote %d MiB of one line on one GET stream: clawd read it to the end", got>>20)
	}
}

// An answer just under 16 MiB of arrays nested 900 deep (within the
// SDK's own limit of 1000) in structuredContent: the SDK's decoder takes
// time in the nesting times the size (a minute of CPU for this one, past
// the call's deadline), so clawd stops reading at maxJSONDepth levels and
// the call fails at once.
func TestHTTPDeeplyNestedAnswer(t *testing.T) {
	t.Parallel()
	const depth = 900
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"deep"}],"structuredContent":{"a":`
		tail := `}}}`
		fill := maxLine - 16 - len(head) - len(tail) - 2*depth
		var b bytes.Buffer
		b.WriteString(head)
		b.WriteString(strings.Repeat("[", depth))
		b.WriteString(strings.Repeat("[],", fill/3))
		b.WriteString("[]")
		b.WriteString(strings.Repeat("]", depth))
		b.WriteString(tail)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b.Bytes())
		return true
	})
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("deep", ts.URL)})
	connected(t, m, "deep")
	start := time.Now()
	res, err := call(t, reg, "deep__get", `{}`)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call took %v", d)
	}
	if err == nil || !strings.Contains(err.Error(), "deeper than") {
		t.Errorf("an answer nested %d deep: %T, %v; want an error saying it nests too deep", depth, res, err)
	}
}

// An event stream nesting too deep is cut the same way, and the count
// follows data lines only: brackets in a comment or an id line, or a
// quote there that would hide the data's brackets, change nothing.
func TestDepthBody(t *testing.T) {
	deep := strings.Repeat("[", maxJSONDepth+1)
	ok := strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)
	for _, c := range []struct {
		sse  bool
		body string
		bad  bool
	}{
		{false, ok, false},
		{false, deep, true},
		{false, `"` + deep + `"`, false},
		{false, `"\"` + deep, false}, // an escaped quote: still in the string
		{false, `"\\"` + deep, true},
		{true, "data: " + ok + "\n\ndata: " + ok + "\n\n", false},
		{true, "data: " + deep + "\n\n", true},
		{true, ": " + deep + "\nid: " + deep + "\ndata: []\n\n", false},
		{true, `: "` + "\ndata: " + deep + "\n\n", true},
		{true, `data: "` + "\ndata: " + deep + "\n\n", true},
		{true, "data: " + ok[:maxJSONDepth] + "\r\ndata: [\r\n\r\n", true},
		{true, "data: " + ok[:maxJSONDepth] + "\r\rdata: [\r\r", false},
		{false, "[" + strings.Repeat("0,", maxJSONValues) + "0]", true},
		{false, `["` + strings.Repeat(",", 2*maxJSONValues) + `"]`, false},
		{true, "data: [" + strings.Repeat("0,", maxJSONValues/2) + "0]\n\ndata: [" + strings.Repeat("0,", maxJSONValues/2) + "0]\n\n", false},
	} {
		b := &depthBody{ReadCloser: io.NopCloser(strings.NewReader(c.body)), sse: c.sse}
		_, err := io.ReadAll(b)
		if bad := err != nil; bad != c.bad {
			t.Errorf("sse %v, %.80q: error %v, want one: %v", c.sse, c.body, err, c.bad)
		}
	}
}

// One event of a tools/call's stream that never ends: cut at 16 MiB, as
// a JSON answer is.
func TestHTTPEventOverTheLimit(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":`+string(id)+`,"result":{"content":[{"type":"text","text":"`)
		endless(w, bytes.Repeat([]byte("x"), 64<<10), 200<<20, &sent)
		return true
	})
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("bigevent", ts.URL)})
	connected(t, m, "bigevent")
	if res, err := call(t, reg, "bigevent__get", `{}`); err == nil {
		t.Errorf("an endless event: %T, want an error", res)
	}
	if got := sent.Load(); got > maxLine+8<<20 {
		t.Errorf("the server wrote %d MiB of one event before clawd stopped reading, want at most about %d MiB", got>>20, maxLine>>20)
	}
}

// A tools/call redirected to its own URL for ever is sent 5 times in all
// (the fifth redirect is refused), then fails; a server's cookies are never sent back (the client keeps no
// cookie jar).
func TestHTTPRedirectLoopAndCookies(t *testing.T) {
	t.Parallel()
	var redirects, cookies atomic.Int64
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, _ json.RawMessage) bool {
		if r.Header.Get("Cookie") != "" {
			cookies.Add(1)
		}
		for i := range 50 {
			http.SetCookie(w, &http.Cookie{Name: fmt.Sprintf("c%d", i), Value: "v", Path: "/"})
		}
		if method != "tools/call" && !strings.HasPrefix(r.URL.Path, "/again") {
			return false
		}
		redirects.Add(1)
		w.Header().Set("Location", "/again")
		w.WriteHeader(http.StatusTemporaryRedirect)
		return true
	})
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("loop", ts.URL)})
	connected(t, m, "loop")
	if res, err := call(t, reg, "loop__get", `{}`); err == nil {
		t.Errorf("a redirect loop: %T, want an error", res)
	}
	if n := redirects.Load(); n != 5 {
		t.Errorf("the server answered %d requests of the call, want 5 (the call and 4 redirects: the 5th is refused)", n)
	}
	if n := cookies.Load(); n != 0 {
		t.Errorf("%d requests carried the server's cookies back", n)
	}
}

// A server that forgets every session, the new one too (404 on every
// request that carries a session id): the call initializes anew once and
// is retried once, then fails; it does not loop.
func TestHTTPSessionForgottenEveryTime(t *testing.T) {
	t.Parallel()
	var inits, calls atomic.Int64
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, _ json.RawMessage) bool {
		switch {
		case method == "initialize":
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", inits.Add(1)))
		case method == "tools/call":
			calls.Add(1)
			http.NotFound(w, r)
			return true
		}
		return false
	})
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("amnesiac", ts.URL)})
	connected(t, m, "amnesiac")
	before := inits.Load()
	if res, err := call(t, reg, "amnesiac__get", `{}`); err == nil {
		t.Errorf("the call succeeded: %T", res)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("tools/call reached the server %d times, want 2", n)
	}
	if n := inits.Load() - before; n != 1 {
		t.Errorf("%d new initializes for the call, want 1", n)
	}
}

// An answer of 16 MiB of empty arrays, one level deep: the SDK decodes
// structuredContent into Go values, 1.4 GiB of heap for this one, so
// clawd stops reading past maxJSONValues values.
func TestHTTPAnswerOfManyValues(t *testing.T) {
	t.Parallel()
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		var b bytes.Buffer
		b.WriteString(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":[`)
		b.WriteString(strings.Repeat("[],", (maxLine-200)/3))
		b.WriteString(`[]]}}}`)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b.Bytes())
		return true
	})
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("many", ts.URL)})
	connected(t, m, "many")
	if res, err := call(t, reg, "many__get", `{}`); err == nil || !strings.Contains(err.Error(), "JSON values") {
		t.Errorf("an answer of %d values: %T, %v; want an error saying it holds too many", maxLine/3, res, err)
	}
}

// An answer with megabytes of headers (short Set-Cookie lines: Go's
// client keeps each as a string of its own, some five times the bytes
// sent) is refused: the headers of the standalone GET stream's answer
// would otherwise be held for the session's life.
func TestHTTPHugeHeaders(t *testing.T) {
	t.Parallel()
	cookies := strings.Repeat("Set-Cookie: a=b\r\n", (4<<20)/17)
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return true
		}
		defer c.Close()
		body := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"fine"}]}}`
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", cookies, len(body), body)
		buf.Flush()
		return true
	})
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("headers", ts.URL)})
	connected(t, m, "headers")
	if res, err := call(t, reg, "headers__get", `{}`); err == nil {
		t.Errorf("an answer with %d MiB of headers: %T, want an error", len(cookies)>>20, res)
	}
}

// A server that forgets the session and then never answers the new
// initialize: the call fails within its read timeout (the connect is
// bounded by the connect timeout), it does not hang.
func TestHTTPSessionForgottenThenHang(t *testing.T) {
	t.Parallel()
	var forgot atomic.Bool
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) }) // before the server's Close (cleanups run last first)
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, _ json.RawMessage) bool {
		switch {
		case method == "initialize" && forgot.Load():
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return true
		case method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
		case method == "tools/call":
			forgot.Store(true)
			http.NotFound(w, r)
			return true
		}
		return false
	})
	m, reg := newTestManager(t, Options{})
	cfg := httpCfg("hang", ts.URL)
	cfg.ConnectTimeout, cfg.ReadTimeout = 5*time.Second, 5*time.Second
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "hang")
	start := time.Now()
	if res, err := call(t, reg, "hang__get", `{}`); err == nil {
		t.Errorf("the call succeeded: %T", res)
	}
	if d := time.Since(start); d > 12*time.Second {
		t.Errorf("the call took %v with a read timeout of 5s", d)
	}
}
