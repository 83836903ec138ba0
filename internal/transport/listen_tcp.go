package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
)

// ListenTCP listens on a loopback address only (docs/transports.md; the
// config already refuses other bind_addr values, this is the last line).
// Port 0 picks a free port; the listener's Addr tells which.
//
// One daemon per port: on Linux and macOS no second socket can listen on an
// address:port held by a listener unless both set SO_REUSEPORT, which clawd
// never does, so a second instance fails with EADDRINUSE; that is the
// spec's "SO_REUSEADDR=false" guarantee. Go's default SO_REUSEADDR is kept:
// it only lets a restarted daemon bind while old connections linger in
// TIME_WAIT, which a literal SO_REUSEADDR=0 would turn into a minute of
// "address already in use" after every restart.
func ListenTCP(bindAddr string, port int) (net.Listener, error) {
	host := bindAddr
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(trimBrackets(host))
	if err != nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("bind_0000_rejected — external binding is forbidden: %s is not a loopback address", bindAddr)
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("port %d: must be 0..65535", port)
	}
	addr := net.JoinHostPort(ip.String(), strconv.Itoa(port))
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%s is already in use (another clawd? see `clawd health`); stop it or pick another port with --port (0 picks a free one): %w", addr, ErrAddrInUse)
		}
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

// ErrAddrInUse reports that the TCP port is held by another listener.
var ErrAddrInUse = errors.New("address already in use")

func trimBrackets(s string) string {
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1]
	}
	return s
}
