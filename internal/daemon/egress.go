package daemon

import (
	"context"
	"fmt"
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

// recheckEgress reconnects the remote servers whose egress entry changed
// since the last look (removed, added, or its private flag flipped): a
// connection made under an entry must not outlive it, and its dialer's
// policy was fixed when it connected. The reconnect asks VerifyOrigin
// again, so a removed origin leaves its server unavailable (disconnected)
// with the line that allows it again. Runs on every trust/allowlist
// change; reads two small tables.
func (d *Daemon) recheckEgress(ctx context.Context) {
	if d.upstreams == nil {
		return
	}
	rows, err := d.Store.EgressAllowlist(ctx)
	d.egress.mu.Lock()
	first := !d.egress.looked
	d.egress.looked = true
	d.egress.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil { // not merely stopping
			d.Logger.Warn("upstream servers: reading the egress allowlist failed", "err", err)
		}
		return
	}
	now := make(map[string]bool, len(rows))
	for _, r := range rows {
		now[r.Origin] = r.Private
	}
	d.egress.mu.Lock()
	prev := d.egress.seen
	d.egress.seen = now
	d.egress.mu.Unlock()
	if prev == nil && first {
		return // the first look: nothing to compare with
	}
	changed := func(origin string) bool {
		if prev == nil {
			return true // the earlier looks failed: anything may have changed
		}
		p, had := prev[origin]
		n, has := now[origin]
		return had != has || p != n
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
			if err := d.upstreams.Refresh(ctx, name); err != nil {
				d.Logger.Debug("upstream servers: reconnect after an egress change", "server", name, "err", err)
			}
		}(s.Name)
	}
}
