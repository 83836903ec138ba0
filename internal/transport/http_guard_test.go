package transport

import (
	"bufio"
	"net/http"
	"testing"
	"time"
)

func TestAllowedHost(t *testing.T) {
	tests := []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1", true},
		{"127.0.0.1:7430", true},
		{"localhost", true},
		{"LOCALHOST:80", true},
		{"[::1]", true},
		{"[::1]:7430", true},
		{"::1", false}, // an IPv6 literal must be bracketed in Host
		{"", false},
		{"127.0.0.1:", false},
		{"127.0.0.1:0", false},
		{"127.0.0.1:65536", false},
		{"127.0.0.1:80x", false},
		{"127.0.0.2", false}, // loopback, but not a name a client uses for clawd
		{"localhost.", false},
		{"localhost.evil.com", false},
		{"evil.com", false},
		{"0.0.0.0", false},
		{"[::ffff:127.0.0.1]", false},
		{"127.0.0.1@evil.com", false},
	}
	for _, tt := range tests {
		if got := allowedHost(tt.host); got != tt.ok {
			t.Errorf("allowedHost(%q) = %v, want %v", tt.host, got, tt.ok)
		}
	}
}

func TestAllowedOrigin(t *testing.T) {
	tests := []struct {
		origin string
		ok     bool
	}{
		{"http://127.0.0.1:7430", true},
		{"http://localhost:3000", true},
		{"https://localhost", true},
		{"http://[::1]:8080", true},
		{"http://localhost/", true},
		{"null", false},
		{"", false},
		{"file://", false},
		{"http://evil.com", false},
		{"http://localhost.evil.com", false},
		{"http://user@localhost", false},
		{"ws://localhost", false},
		{"http://localhost/path", false},
		{"chrome-extension://abcdef", false},
	}
	for _, tt := range tests {
		if got := allowedOrigin(tt.origin); got != tt.ok {
			t.Errorf("allowedOrigin(%q) = %v, want %v", tt.origin, got, tt.ok)
		}
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		values []string
		tok    string
		ok     bool
	}{
		{[]string{"Bearer abc"}, "abc", true},
		{[]string{"bearer abc"}, "abc", true},
		{[]string{"BEARER  abc "}, "abc", true},
		{[]string{"Bearer"}, "", false},
		{[]string{"Bearer "}, "", false},
		{[]string{"Basic abc"}, "", false},
		{[]string{"abc"}, "", false},
		{[]string{"Bearer abc", "Bearer abc"}, "", false},
		{nil, "", false},
	}
	for _, tt := range tests {
		tok, ok := bearerToken(tt.values)
		if tok != tt.tok || ok != tt.ok {
			t.Errorf("bearerToken(%q) = %q, %v; want %q, %v", tt.values, tok, ok, tt.tok, tt.ok)
		}
	}
}

func TestLoopbackPeer(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1":          true,
		"127.255.255.254:1":    true,
		"[::1]:1":              true,
		"[::ffff:127.0.0.1]:1": true,
		"192.168.1.1:1":        false,
		"[fe80::1]:1":          false,
		"127.0.0.1":            false, // no port: not a TCP peer address
		"":                     false,
	} {
		if got := loopbackPeer(addr); got != want {
			t.Errorf("loopbackPeer(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestOptionsStarPassesTheChecks: "OPTIONS *" is a request like any other.
// net/http answers it 200 itself unless told not to, before the handler, so
// it skipped the Host and Origin checks (and their log) that every request
// must pass.
func TestOptionsStarPassesTheChecks(t *testing.T) {
	f := startHTTP(t, nil)
	for _, tt := range []struct {
		name, head string
		status     int
	}{
		{"foreign Host", "OPTIONS * HTTP/1.1\r\nHost: evil.example.com\r\n\r\n", http.StatusForbidden},
		{"foreign Origin", "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example.com\r\n\r\n", http.StatusForbidden},
		{"no token", "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", AuthRefusedStatus},
	} {
		c := f.dialRaw()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte(tt.head)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: HTTP %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
	}
}
