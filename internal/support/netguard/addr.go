// Package netguard decides which network addresses and origins clawd may
// connect to on a user's behalf (remote MCP servers): it classifies IP
// addresses (loopback, private, link-local, ...), parses hosts and origins
// into one canonical form, and checks the address actually dialled, inside
// the dialer, so a name that resolves to a forbidden address (DNS
// rebinding) is refused at connect time. docs/security.md ("Egress")
// describes the policy and its limits.
package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Class is what kind of address an IP is, for egress decisions.
type Class uint8

const (
	// Public: a globally routable unicast address.
	Public Class = iota
	// Loopback: 127.0.0.0/8, ::1. This machine.
	Loopback
	// Private: RFC 1918 (10/8, 172.16/12, 192.168/16), shared address
	// space 100.64/10 (CGNAT), IPv6 unique local fc00::/7, deprecated
	// site-local fec0::/10, NAT64 local-use 64:ff9b:1::/48. A network
	// clawd's machine is in, not the internet.
	Private
	// LinkLocal: 169.254/16 (cloud metadata services at 169.254.169.254),
	// fe80::/10.
	LinkLocal
	// Unspecified: 0.0.0.0/8 ("this network"; connecting to 0.0.0.0
	// reaches this machine on Linux) and ::.
	Unspecified
	// Multicast: 224/4, ff00::/8, and the limited broadcast 255.255.255.255.
	Multicast
	// Reserved: special-purpose ranges that are not meant to be dialled
	// on the internet: IETF protocol assignments 192.0.0/24,
	// documentation (192.0.2/24, 198.51.100/24, 203.0.113/24,
	// 2001:db8::/32, 3fff::/20), SRv6 segment identifiers 5f00::/16,
	// benchmarking 198.18/15, 240/4, the IPv6 discard
	// prefix 100::/64, IPv4-compatible ::a.b.c.d, and ORCHID/other
	// special blocks handled below.
	Reserved
)

func (c Class) String() string {
	switch c {
	case Public:
		return "public"
	case Loopback:
		return "loopback"
	case Private:
		return "private"
	case LinkLocal:
		return "link-local"
	case Unspecified:
		return "unspecified"
	case Multicast:
		return "multicast"
	case Reserved:
		return "reserved"
	}
	return "unknown"
}

// Describe is a short explanation of a class for error messages.
func (c Class) Describe() string {
	switch c {
	case Loopback:
		return "a loopback address (this machine)"
	case Private:
		return "a private-network address (RFC 1918, CGNAT 100.64/10, IPv6 unique-local fc00::/7 or site-local fec0::/10, or local-use NAT64 64:ff9b:1::/48)"
	case LinkLocal:
		return "a link-local address (169.254/16 or fe80::/10, where cloud metadata services live)"
	case Unspecified:
		return "the unspecified address (0.0.0.0/8 or ::, which reaches this machine)"
	case Multicast:
		return "a multicast or broadcast address"
	case Reserved:
		return "a reserved special-purpose address"
	}
	return "a public address"
}

var (
	v4Ranges = []struct {
		p netip.Prefix
		c Class
	}{
		{netip.MustParsePrefix("0.0.0.0/8"), Unspecified},
		{netip.MustParsePrefix("10.0.0.0/8"), Private},
		{netip.MustParsePrefix("100.64.0.0/10"), Private},
		{netip.MustParsePrefix("127.0.0.0/8"), Loopback},
		{netip.MustParsePrefix("169.254.0.0/16"), LinkLocal},
		{netip.MustParsePrefix("172.16.0.0/12"), Private},
		{netip.MustParsePrefix("192.0.0.0/24"), Reserved},
		{netip.MustParsePrefix("192.0.2.0/24"), Reserved},
		{netip.MustParsePrefix("192.88.99.0/24"), Reserved}, // deprecated 6to4 relay anycast
		{netip.MustParsePrefix("192.168.0.0/16"), Private},
		{netip.MustParsePrefix("198.18.0.0/15"), Reserved},
		{netip.MustParsePrefix("198.51.100.0/24"), Reserved},
		{netip.MustParsePrefix("203.0.113.0/24"), Reserved},
		{netip.MustParsePrefix("224.0.0.0/4"), Multicast},
		{netip.MustParsePrefix("255.255.255.255/32"), Multicast},
		{netip.MustParsePrefix("240.0.0.0/4"), Reserved},
	}
	v6Ranges = []struct {
		p netip.Prefix
		c Class
	}{
		{netip.MustParsePrefix("::/128"), Unspecified},
		{netip.MustParsePrefix("::1/128"), Loopback},
		{netip.MustParsePrefix("100::/64"), Reserved},
		{netip.MustParsePrefix("64:ff9b:1::/48"), Private},
		{netip.MustParsePrefix("2001::/23"), Reserved}, // IETF protocol assignments (Teredo, ORCHID, ...)
		{netip.MustParsePrefix("2001:db8::/32"), Reserved},
		{netip.MustParsePrefix("3fff::/20"), Reserved}, // documentation, RFC 9637
		{netip.MustParsePrefix("5f00::/16"), Reserved}, // SRv6 segment identifiers, RFC 9602: not routed on the internet
		{netip.MustParsePrefix("fc00::/7"), Private},
		{netip.MustParsePrefix("fe80::/10"), LinkLocal},
		{netip.MustParsePrefix("fec0::/10"), Private},
		{netip.MustParsePrefix("ff00::/8"), Multicast},
	}
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	siit    = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (RFC 2765): ::ffff:0:a.b.c.d
	sixTo4  = netip.MustParsePrefix("2002::/16")
	compat4 = netip.MustParsePrefix("::/96")
)

// Classify says what kind of address a is. IPv4-mapped (::ffff:a.b.c.d),
// IPv4-translated (::ffff:0:a.b.c.d, which a stateless translator on the
// path turns into a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4
// (2002:aabb:ccdd::) addresses are classified by the IPv4 address they
// carry, so no IPv6 spelling of 169.254.169.254 passes as public. A zone is ignored. The invalid zero
// Addr is Unspecified.
func Classify(a netip.Addr) Class {
	if !a.IsValid() {
		return Unspecified
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		for _, r := range v4Ranges {
			if r.p.Contains(a) {
				return r.c
			}
		}
		return Public
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), siit.Contains(a):
		return Classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixTo4.Contains(a):
		return Classify(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	for _, r := range v6Ranges {
		if r.p.Contains(a) {
			return r.c
		}
	}
	if compat4.Contains(a) {
		return Reserved // IPv4-compatible (deprecated); ::1 and :: matched above
	}
	return Public
}

// ParseLegacyIPv4 reads the IPv4 forms that inet_aton (and so the C
// resolver, curl and browsers) accept besides dotted decimal: 1 to 4 parts,
// each decimal, octal (leading 0) or hexadecimal (0x), the last part
// filling the remaining bytes: "0x7f.1", "017700000001", "2130706433",
// "127.1". ok is false when s is not such a form. Go's own resolver does
// not read these as addresses, so the same URL can reach different places
// depending on the resolver: clawd refuses them in origins (Host).
func ParseLegacyIPv4(s string) (a netip.Addr, ok bool) {
	s = strings.TrimSuffix(s, ".") // a trailing dot (FQDN form) changes nothing
	if s == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, p
		switch {
		case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0" // "0x" alone is 0 for inet_aton
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*uint(i))
	}
	last := vals[len(vals)-1]
	if room := uint(8 * (4 - len(vals) + 1)); last >= 1<<room {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// describeAddr is for error messages: the address and its class.
func describeAddr(a netip.Addr) string {
	return fmt.Sprintf("%s is %s", a.WithZone("").Unmap(), Classify(a).Describe())
}
