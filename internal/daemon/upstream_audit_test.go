package daemon

import (
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/upstream"
)

// Upstream events become audit rows by the convention docs/upstreams.md
// gives, on one line, with secret-looking text masked and the length
// bounded.
func TestUpstreamEventRows(t *testing.T) {
	a := &upstreamAuditor{}
	r := a.record(upstream.Event{Server: "gh", Kind: upstream.EventEgressRefused,
		Detail: "origin https://x:443 refused\nAuthorization: Bearer abcdefghijklmnopqrstuvwxyz0123"})
	if r.EntityID != "clawd" || r.ToolID != "mcp:gh" || r.Step != "upstream" || r.Transport != "daemon" ||
		r.Result != chain.ResultDeny || r.Server != "gh" || r.TrustLevel != chain.NoTrustLevel {
		t.Errorf("row %+v", r)
	}
	if !strings.HasPrefix(r.Reason, "egress_refused: origin https://x:443 refused Authorization: ") ||
		strings.Contains(r.Reason, "abcdefghijklmnopqrstuvwxyz0123") || strings.Contains(r.Reason, "\n") {
		t.Errorf("reason %q: want one line, the token masked", r.Reason)
	}
	r = a.record(upstream.Event{Server: "gh", Kind: upstream.EventSpawn, PID: 42, Path: "/nonexistent/gh-server",
		Args: []string{"--token=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "stdio"}, SHA256: strings.Repeat("ab12", 16)})
	if r.Result != chain.ResultAllow || !strings.HasPrefix(r.Reason, `spawn: command "/nonexistent/gh-server" "--token=`) ||
		strings.Contains(r.Reason, "ghp_abcdefghijklmnopqrstuvwxyz0123456789") || !strings.Contains(r.Reason, "sha256 "+strings.Repeat("ab12", 16)) ||
		!strings.HasSuffix(r.Reason, "; pid 42") {
		t.Errorf("spawn reason %q", r.Reason)
	}
	r = a.record(upstream.Event{Server: "gh", Kind: upstream.EventDisconnect, Detail: strings.Repeat("é", 3000)})
	if len(r.Reason) > maxAuditDetail+len("disconnect: ")+len("…") || !strings.HasSuffix(r.Reason, "…") {
		t.Errorf("a long reason is %d bytes, want it clipped to %d", len(r.Reason), maxAuditDetail)
	}
	if !strings.HasPrefix(r.Reason, "disconnect: é") || strings.ContainsRune(r.Reason, '\uFFFD') {
		t.Error("clipping split a character")
	}
}
