package transport

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkServeHealth is the server's own cost of GET /health: every check
// (peer, Host, Origin) plus the health object, without the network.
func BenchmarkServeHealth(b *testing.B) {
	h := &HTTPServer{Server: newTestMCPServer(newBlockTool()), Auth: staticAuth(testToken),
		Health: func() Health {
			return Health{Status: "ok", PID: 1, UptimeS: 2, MCPVersion: "2025-11-25", ActiveTools: 5, LastPolicyEvalMS: 0}
		}}
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7430/health", nil)
	r.RemoteAddr = "127.0.0.1:50000"
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkHealthLoopback is one client's sequential GET /health over a
// kept-alive loopback connection.
func BenchmarkHealthLoopback(b *testing.B) {
	f := startHTTP(b, nil)
	url := f.base + PathHealth
	b.ReportAllocs()
	for b.Loop() {
		resp, err := f.hc.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkHealthLaneRequest is the lane's work for one request between
// its read and its write: find the head, parse it, build the answer.
func BenchmarkHealthLaneRequest(b *testing.B) {
	h := &HTTPServer{Health: func() Health {
		return Health{Status: "ok", PID: 1, UptimeS: 2, MCPVersion: "2025-11-25", ActiveTools: 5, LastPolicyEvalMS: 0}
	}}
	head := []byte("GET /health HTTP/1.1\r\nHost: 127.0.0.1:7430\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n")
	var body, out []byte
	b.ReportAllocs()
	for b.Loop() {
		end := headEnd(head)
		isHead, ok := parseHealthRequest(head[:end])
		if !ok {
			b.Fatal("not a health request")
		}
		hl := h.health()
		body = hl.AppendJSON(body[:0])
		out = appendHealthResponse(out[:0], body, isHead)
	}
}

// BenchmarkHealthLaneLoopback is one raw client's sequential GET /health
// over a kept-alive loopback connection, answered by the lane, and by
// net/http (a query string keeps a request out of the lane): the same
// client, so the difference is the server's.
func BenchmarkHealthLaneLoopback(b *testing.B) {
	for _, bc := range []struct{ name, target string }{{"lane", "/health"}, {"net-http", "/health?nolane"}} {
		b.Run(bc.name, func(b *testing.B) {
			f := startHTTP(b, nil)
			c := f.dialRaw()
			br := bufio.NewReader(c)
			req := []byte("GET " + bc.target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			getReq := &http.Request{Method: http.MethodGet}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				resp, err := http.ReadResponse(br, getReq)
				if err != nil || resp.StatusCode != 200 {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if lane := f.h.laneServed.Load() > 0; lane != (bc.name == "lane") {
				b.Fatalf("lane answered: %v", lane)
			}
		})
	}
}
