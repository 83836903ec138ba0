package runstate

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestParseProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1CF6":                         "127.0.0.1:7414",
		"00000000:0050":                         "0.0.0.0:80",
		"00000000000000000000000001000000:1CF6": "[::1]:7414",
		"0000000000000000FFFF00000100007F:1CF6": "[::ffff:127.0.0.1]:7414",
	} {
		got, ok := parseProcAddr(in)
		if !ok || got != netip.MustParseAddrPort(want) {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s", in, got, ok, want)
		}
	}
}

// A listener of this process passes on either loopback address; a port
// nobody listens on does not.
func TestCheckListenerOwn(t *testing.T) {
	for _, a := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Logf("%s: %v", a, err)
			continue
		}
		addr := ln.Addr().String()
		if err := CheckListener(addr); err != nil {
			t.Errorf("CheckListener(%s), our own listener: %v", addr, err)
		}
		ln.Close()
		if err := CheckListener(addr); err == nil || !strings.Contains(err.Error(), "no socket of this user") {
			t.Errorf("CheckListener(%s) after close: %v", addr, err)
		}
	}
}
