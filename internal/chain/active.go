package chain

import "github.com/clawde/clawd/internal/tools"

// Active reports whether anyone at all could call the tool now: it is not
// switched off in config ([tools]) and its provider passes the supply-chain
// step. It is the caller-independent part of Visible (which adds the
// caller's trust row and policy), and what health's active_tools counts, so
// /health and tools/list cannot disagree about which tools exist.
//
// For built-in tools it allocates nothing, as GET /health needs; a local
// executable's tool costs a stat of its binary (HashCache), a refused one
// the denial it builds.
func (c *Chain) Active(e tools.Entry) bool {
	if e.Tool == nil {
		return false
	}
	if c.options().Disabled(e.Tool.Spec()) {
		return false
	}
	return c.supply(e) == nil
}

// ActiveCount is how many of the registry's tools are Active (what /health
// reports), with a provider's origin checked once per run of its tools
// (the registry keeps a provider's tools together): with 30 upstream
// servers, 30 origin checks instead of one per tool. Over built-in tools
// it allocates nothing; each upstream server's check costs what Active's
// does (a stat of a local executable, a parse of a remote URL).
func (c *Chain) ActiveCount(r *tools.Registry) int {
	opts := c.options()
	var last tools.Provider
	lastOK := false
	return r.Count(func(e tools.Entry) bool {
		if e.Tool == nil || opts.Disabled(e.Tool.Spec()) || definition(e) != nil {
			return false
		}
		if last == nil || e.Provider != last {
			last, lastOK = e.Provider, c.supplyOrigin(e) == nil
		}
		return lastOK
	})
}
