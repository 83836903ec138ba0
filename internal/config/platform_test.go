package config

import (
	"strings"
	"testing"
)

// What each OS serves: stdio and tcp_loopback everywhere, unix_socket on
// Linux and macOS only, with an error naming tcp_loopback elsewhere; stdio
// is the default on all three.
func TestCheckTransport(t *testing.T) {
	for _, tc := range []struct {
		tr, goos string
		ok       bool
	}{
		{TransportStdio, "linux", true},
		{TransportStdio, "darwin", true},
		{TransportStdio, "windows", true},
		{TransportUnixSocket, "linux", true},
		{TransportUnixSocket, "darwin", true},
		{TransportUnixSocket, "windows", false},
		{TransportUnixSocket, "freebsd", false},
		{TransportTCPLoopback, "linux", true},
		{TransportTCPLoopback, "darwin", true},
		{TransportTCPLoopback, "windows", true},
		{"pipe", "windows", false},
	} {
		err := CheckTransport(tc.tr, tc.goos)
		if (err == nil) != tc.ok {
			t.Errorf("CheckTransport(%q, %q) = %v, want ok=%v", tc.tr, tc.goos, err, tc.ok)
		}
		if err != nil && tc.tr == TransportUnixSocket && !strings.Contains(err.Error(), TransportTCPLoopback) {
			t.Errorf("CheckTransport(%q, %q) = %q: does not name %s", tc.tr, tc.goos, err, TransportTCPLoopback)
		}
	}
	if d := Default().Transport; d != TransportStdio {
		t.Errorf("default transport %q, want stdio", d)
	}
}
