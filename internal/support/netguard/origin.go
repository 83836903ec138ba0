package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Origin is what an egress allowlist entry names and what a connection is
// checked against: scheme, host and port, in one canonical form, so two
// spellings of one place compare equal and an entry for one place never
// admits another.
type Origin struct {
	// Scheme is "http" or "https".
	Scheme string
	// Host is a lower-case ASCII name without a trailing dot (an
	// internationalized name in its xn-- form, as the HTTP client dials
	// it), or an IP address in its standard form (IPv4-mapped IPv6
	// unmapped).
	Host string
	// Port is 1-65535; a URL without one gets its scheme's default.
	Port int
}

// String is scheme://host:port, with an IPv6 address in brackets and the
// port always written.
func (o Origin) String() string {
	return o.Scheme + "://" + net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
}

// Addr is the host as an IP address when it is one.
func (o Origin) Addr() (netip.Addr, bool) {
	a, err := netip.ParseAddr(o.Host)
	return a, err == nil
}

// LoopbackHost reports whether the host itself says "this machine": a
// loopback address, or localhost (and names under .localhost, RFC 6761).
// Only then may the connection reach a loopback address without the
// private flag; a public name that resolves to 127.0.0.1 is refused, or a
// rebinding name could reach local services.
func (o Origin) LoopbackHost() bool {
	if a, ok := o.Addr(); ok {
		return Classify(a) == Loopback
	}
	return o.Host == "localhost" || strings.HasSuffix(o.Host, ".localhost")
}

// CanonicalHost returns host (as in a URL, IPv6 with or without brackets)
// in Origin.Host's form, or an error naming what is wrong and how to write
// it instead. Refused: IPv4 addresses in the legacy forms (0x7f.1,
// 017700000001, 127.1), which the C resolver reads as addresses and Go's
// does not; IPv6 zones; names whose last label is numeric; names that are
// not valid (empty labels, characters outside letters, digits, '-', '_').
func CanonicalHost(host string) (string, error) {
	h := host
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return "", fmt.Errorf("the host is empty")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("host %q: an IPv6 zone (%%%s) cannot be part of an origin", host, a.Zone())
		}
		return a.Unmap().String(), nil
	}
	if a, ok := ParseLegacyIPv4(h); ok {
		return "", fmt.Errorf("host %q is an IPv4 address in a legacy form (hex, octal or fewer than four parts) that resolvers read differently; write it as %s", host, a)
	}
	name := strings.TrimSuffix(h, ".") // example.com. and example.com are one name
	if !isASCII(name) {
		a, err := idna.Lookup.ToASCII(name)
		if err != nil {
			return "", fmt.Errorf("host %q is not a valid internationalized domain name: %v", host, err)
		}
		name = a
	}
	name = strings.ToLower(name)
	if len(name) > 253 {
		return "", fmt.Errorf("host %q is longer than 253 characters", host)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", fmt.Errorf("host %q: each dot-separated part must have 1-63 characters", host)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("host %q: %q is not allowed in a host name (letters, digits, '-', '_' and dots)", host, string(c))
			}
		}
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return "", fmt.Errorf("host %q ends in a number but is not an IP address; write the address as a.b.c.d or use a name", host)
	}
	return name, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// OriginOf returns the origin of an absolute http or https URL. Its errors
// name the part that is wrong, never the whole URL: an upstream's URL may
// carry an API key in its path or query, and these errors reach logs,
// audit rows and tool results.
func OriginOf(u *url.URL) (Origin, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Origin{}, fmt.Errorf("scheme %q: the scheme must be http or https", u.Scheme)
	}
	if u.Host == "" {
		return Origin{}, fmt.Errorf("the URL has no host")
	}
	host, err := CanonicalHost(u.Hostname())
	if err != nil {
		return Origin{}, err
	}
	port := 443
	if scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Origin{}, fmt.Errorf("port %q: use 1-65535", p)
		}
		port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return Origin{}, fmt.Errorf("%q: the port after ':' is empty", u.Host)
	}
	return Origin{Scheme: scheme, Host: host, Port: port}, nil
}

// OriginOfURL parses rawURL and returns its origin. Like OriginOf's, its
// errors do not repeat rawURL (url.Parse's would, whole).
func OriginOfURL(rawURL string) (Origin, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Origin{}, fmt.Errorf("not a URL: %v", err)
	}
	return OriginOf(u)
}

// ParseOrigin reads an origin as a user types it: scheme://host[:port],
// optionally with a trailing "/". Anything more (a path, a query, user
// information) is refused with the origin it would be, so nobody believes
// they allowed one path of a site: an entry admits the whole origin.
func ParseOrigin(s string) (Origin, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Origin{}, fmt.Errorf("origin %q is not a URL: %v", s, err)
	}
	if u.Scheme == "" || u.Host == "" {
		return Origin{}, fmt.Errorf("origin %q: write it as scheme://host[:port], e.g. https://mcp.example.com", s)
	}
	o, err := OriginOf(u)
	if err != nil {
		return Origin{}, fmt.Errorf("origin %q: %v", s, err)
	}
	if u.User != nil {
		return Origin{}, fmt.Errorf("origin %q: user information is not part of an origin; give %s", u.Redacted(), o)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return Origin{}, fmt.Errorf("origin %q has a path, query or fragment; an entry admits the whole origin, so give just %s", u.Redacted(), o)
	}
	return o, nil
}
