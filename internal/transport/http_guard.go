package transport

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// The request checks of the loopback HTTP transport, in layers. Loopback alone is not enough: a browser tab is on loopback
// too, so Host (DNS rebinding) and Origin (cross-site requests) are checked
// before the token, and Content-Type must be application/json so a browser
// cannot send the request without a CORS preflight, which is never granted.

// loopbackPeer reports whether the TCP peer address is a loopback address
// (an IPv4-mapped IPv6 loopback address counts).
func loopbackPeer(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return false
	}
	return ap.Addr().Unmap().IsLoopback()
}

// allowedHost reports whether a Host header (or an Origin's host) names this
// machine's loopback interface: 127.0.0.1, localhost or [::1], with any
// numeric port or none. Any port is accepted because a local proxy (or port
// forwarding inside the machine) may front the daemon; what matters against
// DNS rebinding is that the name cannot be an attacker's domain.
func allowedHost(hostport string) bool {
	host := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		if !numericPort(port) {
			return false
		}
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	} else if strings.Contains(hostport, ":") {
		return false // an unbracketed IPv6 literal or a malformed port
	}
	switch strings.ToLower(host) {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

func numericPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n > 0 && n <= 65535
}

// allowedOrigin reports whether an Origin header is a loopback origin
// (http or https, host as allowedHost). "null" and anything with a path,
// credentials or another scheme is refused.
func allowedOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return false
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	if u.Path != "" && u.Path != "/" {
		return false
	}
	return allowedHost(u.Host)
}

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header. The scheme is case-insensitive (RFC 7235); more than one
// Authorization header is refused.
func bearerToken(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	scheme, tok, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}
