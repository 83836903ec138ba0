package runstate

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// ProbeHealth reads the pid of a clawd /health answer, and refuses what is
// not one: another HTTP server on the port, a redirect, a non-loopback
// address (which is never dialled).
func TestProbeHealth(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("a probe sent credentials")
		}
		w.Write([]byte(`{"status":"ok","pid":4242,"uptime_s":1,"mcp_version":"v","active_tools":5,"extra":true}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	if pid, err := ProbeHealth(addr); err != nil || pid != 4242 {
		t.Fatalf("ProbeHealth = %d, %v; want 4242", pid, err)
	}

	for name, h := range map[string]http.HandlerFunc{
		"not JSON": func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hello")) },
		"no pid":   func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"status":"ok"}`)) },
		"HTTP 500": func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{"pid":1}`, 500) },
		"a redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://192.0.2.1/health", http.StatusFound)
		},
		"JSON non-obj": func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`[1]`)) },
	} {
		s := httptest.NewServer(h)
		if pid, err := ProbeHealth(strings.TrimPrefix(s.URL, "http://")); err == nil {
			t.Errorf("%s: ProbeHealth = %d, want an error", name, pid)
		}
		s.Close()
	}
	if _, err := ProbeHealth("192.0.2.1:80"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("a non-loopback address: %v, want a refusal naming loopback", err)
	}
}
