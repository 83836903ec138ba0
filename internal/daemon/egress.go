package daemon

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/netguard"
)

// VerifyEgress returns the check an http/sse server's origin must pass
// before clawd connects to it (upstream.Options.VerifyOrigin): the origin
// must be on the egress allowlist, else the error gives the line that
// allows it; the entry's private flag becomes the dialer's policy. The
// daemon and `clawd mcp test` use it.
func VerifyEgress(db *store.DB) func(server string, o netguard.Origin) (netguard.Policy, error) {
	return func(server string, o netguard.Origin) (netguard.Policy, error) {
		p, ok, err := db.EgressPolicy(o)
		if err != nil {
			return netguard.Policy{}, fmt.Errorf("the egress allowlist could not be read: %v", err)
		}
		if !ok {
			return netguard.Policy{}, fmt.Errorf("origin %s is not on the egress allowlist, so clawd did not connect to it; if you trust it: %s", o, netguard.AllowCommand(o, false))
		}
		return p, nil
	}
}

// egressState is the egress allowlist as the daemon last saw it (origin ->
// private flag), to tell which entries a change touched.
type egressState struct {
	mu   sync.Mutex
	seen map[string]bool
	// looked is set by the first look, even one whose read failed: a
	// later first success then has no baseline and reconnects every
	// remote server, since the list may have changed in between.
	looked bool
}

// update records the allowlist of this look (now; err when it could not
// be read) and returns which origins changed since the last successful
// look: nil when none did or there is nothing to compare with (the very
// first look, or a failed read, which keeps the old baseline); a func
// saying true for every origin when earlier looks all failed.
func (e *egressState) update(now map[string]bool, err error) (changed func(origin string) bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	first := !e.looked
	e.looked = true
	if err != nil {
		return nil
	}
	prev := e.seen
	e.seen = now
	switch {
	case prev == nil && first:
		return nil // the first look: nothing to compare with
	case prev == nil:
		return func(string) bool { return true } // the earlier looks failed: anything may have changed
	case maps.Equal(prev, now):
		return nil // a change of the registry, credentials or pins, not of egress
	}
	return func(origin string) bool {
		p, had := prev[origin]
		n, has := now[origin]
		return had != has || p != n
	}
}

// recheckEgress reconnects the remote servers whose egress entry changed
// since the last look (removed, added, or its private flag flipped): a
// connection made under an entry must not outlive it, and its dialer's
// policy was fixed when it connected. The reconnect asks VerifyOrigin
// again, so a removed origin leaves its server unavailable (disconnected)
// with the line that allows it again. Runs on every change of the store's
// change counter (trust registry, allowlists, credentials, pins): the list
// comes from the store's snapshot, which that change reloads anyway for
// the chain, and the server table is read only when an entry changed.
func (d *Daemon) recheckEgress(ctx context.Context) {
	m := d.upstreams.Load()
	if m == nil {
		return
	}
	now, err := d.Store.EgressOrigins()
	if err != nil && ctx.Err() == nil { // not merely stopping
		d.Logger.Warn("upstream servers: reading the egress allowlist failed", "err", err)
	}
	changed := d.egress.update(now, err)
	if changed == nil {
		return
	}
	servers, err := d.Store.MCPServers(ctx)
	if err != nil {
		return
	}
	for _, s := range servers {
		if s.Builtin || !s.Enabled || (s.Transport != store.TransportHTTP && s.Transport != store.TransportSSE) {
			continue
		}
		o, err := netguard.OriginOfURL(s.URL)
		if err != nil || !changed(o.String()) {
			continue
		}
		go func(name string) {
			if err := m.Refresh(ctx, name); err != nil {
				d.Logger.Debug("upstream servers: reconnect after an egress change", "server", name, "err", err)
			}
		}(s.Name)
	}
}
