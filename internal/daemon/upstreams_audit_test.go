package daemon

import (
	"log/slog"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/upstream"
)

// TestAuditUpstreamEvent: an event of the upstream manager becomes the
// upstream audit row the shared conventions describe.
func TestAuditUpstreamEvent(t *testing.T) {
	a := &chain.MemoryAudit{}
	logger := slog.New(slog.DiscardHandler)
	d := &Daemon{Chain: &chain.Chain{Audit: a}, Logger: logger, upstreamAudit: newUpstreamAuditor(a, logger.Warn)}
	at := time.Now()
	d.auditUpstream(upstream.AuditEvent{Time: at, Entity: "cc:ws", Tool: "mcp:orders/find", Reason: "identity_refused: x"})
	d.upstreamAudit.close() // writes what is queued
	rows := a.Rows()
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.EntityID != "cc:ws" || r.ToolID != "mcp:orders/find" || r.Step != "upstream" || r.Result != chain.ResultDeny ||
		r.Transport != "daemon" || r.Reason != "identity_refused: x" || !r.Time.Equal(at) || r.TrustLevel != chain.NoTrustLevel ||
		r.Server != "orders" {
		t.Errorf("row %+v", r)
	}
	(&Daemon{Chain: &chain.Chain{}}).auditUpstream(upstream.AuditEvent{}) // no upstreams running: nothing, no panic
}
