package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"
)

// Policy is what connections made for one allowlisted origin may reach.
type Policy struct {
	Origin Origin
	// Private: the user allowed this origin with the private flag
	// (`clawd egress allow --private`), so private, link-local and
	// reserved addresses, and loopback under any name, may be dialled.
	Private bool
}

// AllowCommand is the command that allows o (with --private when private).
func AllowCommand(o Origin, private bool) string {
	if private {
		return "clawd egress allow --private " + o.String()
	}
	return "clawd egress allow " + o.String()
}

// RefusedError is a connection the policy refused before it was made.
type RefusedError struct {
	Origin Origin
	Addr   netip.Addr // the address that would have been dialled
	Class  Class
	// Fixable: the private flag would allow it (else the address is never
	// dialled: unspecified, multicast).
	Fixable bool
}

func (e *RefusedError) Error() string {
	via := ""
	if a, ok := e.Origin.Addr(); !ok || a != e.Addr.WithZone("").Unmap() {
		via = " (" + e.Origin.Host + " resolved to it)"
	}
	msg := fmt.Sprintf("egress refused: %s%s, so clawd did not connect to %s", describeAddr(e.Addr), via, e.Origin)
	if e.Fixable {
		msg += "; if that address is meant: " + AllowCommand(e.Origin, true)
	} else {
		msg += "; clawd never connects there: change the server's URL"
	}
	return msg
}

// Check decides whether a connection for p may go to a.
func (p Policy) Check(a netip.Addr) error {
	c := Classify(a)
	switch c {
	case Public:
		return nil
	case Loopback:
		if p.Private || p.Origin.LoopbackHost() {
			return nil
		}
	case Private, LinkLocal, Reserved:
		if p.Private {
			return nil
		}
	}
	return &RefusedError{Origin: p.Origin, Addr: a, Class: c, Fixable: c != Unspecified && c != Multicast}
}

// Guard enforces a Policy inside a net.Dialer: Control sees every address
// the dialer actually connects to, after name resolution, so the check
// cannot be raced by a name that resolves differently the second time
// (DNS rebinding). It remembers the last refusal, so a caller can tell an
// egress refusal from a network failure however the error was wrapped on
// the way up.
type Guard struct {
	p       Policy
	refused atomic.Pointer[RefusedError]
}

// NewGuard returns a guard for p.
func NewGuard(p Policy) *Guard { return &Guard{p: p} }

// Policy is the guard's policy.
func (g *Guard) Policy() Policy { return g.p }

// Control is a net.Dialer ControlContext: it refuses any address p does
// not allow, any port other than the origin's, and anything but TCP.
func (g *Guard) Control(_ context.Context, network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return fmt.Errorf("egress refused: network %q is not TCP", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress refused: cannot read the dialled address %q: %v", address, err)
	}
	if int(ap.Port()) != g.p.Origin.Port {
		return fmt.Errorf("egress refused: %s is not the port of %s", address, g.p.Origin)
	}
	if err := g.p.Check(ap.Addr()); err != nil {
		g.refused.Store(err.(*RefusedError))
		return err
	}
	return nil
}

// Refused returns the last refusal, or nil.
func (g *Guard) Refused() *RefusedError { return g.refused.Load() }

// Dialer returns a dialer that connects only where g allows, within
// timeout. resolver may be nil (the system's).
func (g *Guard) Dialer(timeout time.Duration, resolver *net.Resolver) *net.Dialer {
	return &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, ControlContext: g.Control, Resolver: resolver}
}
