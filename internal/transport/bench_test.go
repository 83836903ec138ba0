package transport

import (
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
