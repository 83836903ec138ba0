package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// rawExchange writes raw to c and reads one response.
func rawExchange(t *testing.T, c net.Conn, br *bufio.Reader, raw string) (*http.Response, []byte) {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatalf("write %q: %v", raw, err)
	}
	return readRawResponse(t, br, raw)
}

func readRawResponse(t *testing.T, br *bufio.Reader, raw string) (*http.Response, []byte) {
	t.Helper()
	method, _, _ := strings.Cut(raw, " ")
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("response to %q: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("body of the response to %q: %v", raw, err)
	}
	return resp, body
}

const getHealth = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: probe\r\n\r\n"

// TestHealthLaneAnswersAsNetHTTPDoes: the lane's answer and net/http's
// answer to the same health request are the same response.
func TestHealthLaneAnswersAsNetHTTPDoes(t *testing.T) {
	f := startHTTP(t, nil)
	for _, method := range []string{"GET", "HEAD"} {
		t.Run(method, func(t *testing.T) {
			c := f.dialRaw()
			br := bufio.NewReader(c)
			before := f.h.laneServed.Load()
			lane, laneBody := rawExchange(t, c, br, method+" /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			if f.h.laneServed.Load() != before+1 {
				t.Fatal("the lane did not answer a plain health request")
			}
			// A query is not the lane's: the same connection goes to net/http.
			std, stdBody := rawExchange(t, c, br, method+" /health?from=nethttp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			if f.h.laneServed.Load() != before+1 {
				t.Fatal("the lane answered a request with a query")
			}
			if lane.StatusCode != 200 || std.StatusCode != 200 {
				t.Fatalf("status lane %d, net/http %d", lane.StatusCode, std.StatusCode)
			}
			if !bytes.Equal(laneBody, stdBody) {
				t.Errorf("body:\nlane     %s\nnet/http %s", laneBody, stdBody)
			}
			if method == "GET" && !strings.Contains(string(laneBody), `"pid":4242`) {
				t.Errorf("lane body %s is not the server's health object", laneBody)
			}
			lane.Header.Del("Date")
			std.Header.Del("Date")
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range std.Header {
					if !yield(k) {
						return
					}
				}
			}) {
				if got, want := lane.Header.Values(k), std.Header.Values(k); !slices.Equal(got, want) {
					t.Errorf("header %s: lane %q, net/http %q", k, got, want)
				}
			}
			if len(lane.Header) != len(std.Header) {
				t.Errorf("headers: lane %v, net/http %v", lane.Header, std.Header)
			}
		})
	}
}

// TestHealthLaneKeepAlive: one connection, many requests, some pipelined.
func TestHealthLaneKeepAlive(t *testing.T) {
	f := startHTTP(t, nil)
	c := f.dialRaw()
	br := bufio.NewReader(c)
	before := f.h.laneServed.Load()
	for range 50 {
		if resp, _ := rawExchange(t, c, br, getHealth); resp.StatusCode != 200 {
			t.Fatalf("HTTP %d", resp.StatusCode)
		}
	}
	io.WriteString(c, strings.Repeat(getHealth, 50)) // pipelined
	for range 50 {
		if resp, _ := readRawResponse(t, br, getHealth); resp.StatusCode != 200 {
			t.Fatalf("pipelined: HTTP %d", resp.StatusCode)
		}
	}
	if n := f.h.laneServed.Load() - before; n != 100 {
		t.Errorf("the lane answered %d of 100 requests", n)
	}
}

// TestHealthLaneHandsOff: every request that is not exactly a plain health
// request is net/http's, and gets net/http's answer: refusals keep their
// status codes and log lines.
func TestHealthLaneHandsOff(t *testing.T) {
	// Every refusal gets its own log line when they are this far apart.
	f := startHTTP(t, func(h *HTTPServer) { h.connLogEvery = time.Nanosecond })
	tests := []struct {
		name   string
		raw    string
		status int
		log    string // substring expected in the server log
	}{
		{"POST", "POST /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", 405, ""},
		{"lower-case method", "get /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405, ""},
		{"foreign Host", "GET /health HTTP/1.1\r\nHost: evil.example.com\r\n\r\n", 403, "foreign Host"},
		{"two Host headers", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n\r\n", 400, ""},
		{"no Host", "GET /health HTTP/1.1\r\nUser-Agent: x\r\n\r\n", 400, ""},
		{"foreign Origin", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example.com\r\n\r\n", 403, "cross-origin"},
		{"Origin null", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: null\r\n\r\n", 403, "cross-origin"},
		{"a body", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc", 200, ""},
		{"chunked", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 200, ""},
		{"Expect", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n\r\n", 200, ""},
		{"bare LF line ends", "GET /health HTTP/1.1\nHost: 127.0.0.1\n\n", 200, ""},
		{"HTTP/1.0", "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", 200, ""},
		{"folded header", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: b\r\n c\r\n\r\n", 200, ""}, // net/http unfolds it
		{"control byte in a value", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: b\x01c\r\n\r\n", 400, ""},
		{"space before the colon", "GET /health HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n", 400, ""},
		{"head over the lane's buffer", "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", 200, ""},
		{"the MCP path", "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 403, ""},
		{"absolute form", "GET http://127.0.0.1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.dialRaw()
			before := f.h.laneServed.Load()
			resp, body := rawExchange(t, c, bufio.NewReader(c), tt.raw)
			if resp.StatusCode != tt.status {
				t.Errorf("HTTP %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if f.h.laneServed.Load() != before {
				t.Error("the lane answered it")
			}
			if tt.log != "" && !strings.Contains(f.log.String(), tt.log) {
				t.Errorf("no %q in the log", tt.log)
			}
		})
	}
}

// TestHealthLaneConnectionClose: "Connection: close" is net/http's, which
// answers and closes.
func TestHealthLaneConnectionClose(t *testing.T) {
	f := startHTTP(t, nil)
	c := f.dialRaw()
	br := bufio.NewReader(c)
	resp, _ := rawExchange(t, c, br, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != 200 || !resp.Close {
		t.Fatalf("HTTP %d close %v, want 200 and close", resp.StatusCode, resp.Close)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after Connection: close, read = %v, want EOF", err)
	}
}

// TestHealthLaneThenMCP: a client polls /health and then speaks MCP on the
// same connection, once in turns and once pipelined (the lane has already
// read the MCP request when it hands the connection over).
func TestHealthLaneThenMCP(t *testing.T) {
	f := startHTTP(t, nil)
	post := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", testToken, len(initBody), initBody)
	for _, pipelined := range []bool{false, true} {
		t.Run(fmt.Sprint("pipelined=", pipelined), func(t *testing.T) {
			c := f.dialRaw()
			br := bufio.NewReader(c)
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if pipelined {
				io.WriteString(c, getHealth+post+getHealth)
			}
			for i, raw := range []string{getHealth, post, getHealth} {
				var resp *http.Response
				var body []byte
				if pipelined {
					resp, body = readRawResponse(t, br, raw)
				} else {
					resp, body = rawExchange(t, c, br, raw)
				}
				if resp.StatusCode != 200 {
					t.Fatalf("request %d: HTTP %d %s", i, resp.StatusCode, body)
				}
				if i == 1 && resp.Header.Get(HeaderSessionID) == "" {
					t.Errorf("initialize after health: no session id; body %s", body)
				}
			}
		})
	}
}

// TestHealthLaneIdleTimeout: a connection polling more often than the idle
// timeout stays open; one that stops is closed.
func TestHealthLaneIdleTimeout(t *testing.T) {
	f := startHTTP(t, func(h *HTTPServer) { h.timeouts = timeouts{idle: 300 * time.Millisecond} })
	c := f.dialRaw()
	br := bufio.NewReader(c)
	for i := range 8 { // 800 ms in all
		if resp, _ := rawExchange(t, c, br, getHealth); resp.StatusCode != 200 {
			t.Fatalf("request %d: HTTP %d", i, resp.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Errorf("idle connection: read = %v, want it closed", err)
	}
}

func isReset(err error) bool {
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestHealthLaneShutdown: stopping the server closes the connections the
// lane holds, so Serve returns at once.
func TestHealthLaneShutdown(t *testing.T) {
	h := &HTTPServer{Server: newTestMCPServer(newBlockTool()), Auth: staticAuth(testToken)}
	ln, err := ListenTCP("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx, ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	if resp, _ := rawExchange(t, c, br, getHealth); resp.StatusCode != 200 {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Serve did not return with a lane connection open")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("shutdown took %v", d)
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := br.ReadByte(); err == nil {
		t.Error("the lane connection is still open after shutdown")
	}
}

// FuzzHealthLane: whatever the lane accepts, net/http parses as a GET or
// HEAD of /health with one allowed Host, no body and keep-alive, and the
// head the lane found is exactly the bytes net/http consumed.
func FuzzHealthLane(f *testing.F) {
	for _, s := range []string{
		getHealth,
		"HEAD /health HTTP/1.1\r\nHost: localhost:7430\r\n\r\n",
		"GET /health HTTP/1.1\r\nHost: [::1]:1\r\nOrigin: http://127.0.0.1:3000\r\nContent-Length: 0\r\n\r\n",
		"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
		"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /health HTTP/1.1\r\n",
		"GET /health HTTP/1.1\r\nhOsT:\t127.0.0.1 \r\nX-Empty:\r\n\r\n",
		"GET /health HTTP/1.1\nHost: 127.0.0.1\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		end := headEnd(data)
		if end <= 0 {
			return
		}
		head := data[:end]
		isHead, ok := parseHealthRequest(head)
		if !ok {
			return
		}
		br := bufio.NewReader(bytes.NewReader(head))
		r, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("lane accepted %q; net/http: %v", head, err)
		}
		if want := map[bool]string{false: "GET", true: "HEAD"}[isHead]; r.Method != want {
			t.Errorf("lane: %s; net/http: %s", want, r.Method)
		}
		if r.URL.Path != PathHealth || r.URL.RawQuery != "" || !allowedHost(r.Host) || r.ContentLength > 0 ||
			len(r.TransferEncoding) > 0 || r.Close || r.ProtoMinor != 1 {
			t.Errorf("lane accepted %q; net/http read %s %s host %q len %d te %v close %v", head,
				r.Method, r.URL, r.Host, r.ContentLength, r.TransferEncoding, r.Close)
		}
		for _, o := range r.Header.Values("Origin") {
			if !allowedOrigin(o) {
				t.Errorf("lane accepted Origin %q", o)
			}
		}
		if br.Buffered() != 0 {
			t.Errorf("net/http left %d bytes of the head the lane found", br.Buffered())
		}
	})
}
