package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/safetext"
	"github.com/clawde/clawd/internal/upstream"
)

// checkUpstreamTools is upstream.Options.CheckTools: it records the
// definitions a server lists now (so `clawd mcp diff` and `approve` see
// them), audits each one that has just become unapproved
// (definition_changed), and says which are approved. Only those are
// offered; docs/upstreams.md describes the approval workflow.
func (d *Daemon) checkUpstreamTools(server string, defs []upstream.ToolDefinition) (map[string]upstream.Approval, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	seen := make([]store.SeenDefinition, len(defs))
	for i, def := range defs {
		seen[i] = store.SeenDefinition{Tool: def.Tool, Exposed: def.Exposed, SHA256: def.SHA256, Canonical: def.Canonical}
	}
	states, changes, err := d.Store.RecordToolDefinitions(ctx, server, seen, time.Now())
	if err != nil {
		return nil, err
	}
	for i, c := range changes {
		if i == maxChangeRows {
			more := len(changes) - maxChangeRows
			d.recordUpstreamEvent(chain.AuditRecord{
				EntityID: "clawd", ToolID: "mcp:" + server, Server: server, Result: chain.ResultDeny,
				Reason: fmt.Sprintf("definition_changed: %d more tools new or changed in this listing, each withheld until approved (clawd mcp diff %s)", more, server),
			})
			d.Logger.Warn("upstream tools withheld until their definitions are approved", "server", server, "more", more)
			break
		}
		d.recordUpstreamEvent(chain.AuditRecord{
			EntityID: "clawd", ToolID: "mcp:" + server + "/" + safetext.Line(c.Tool), Server: server, Result: chain.ResultDeny,
			Reason: definitionChangeReason(server, c),
		})
		d.Logger.Warn("upstream tool withheld until its definition is approved", "server", server, "tool", c.Exposed,
			"state", c.State, "sha256", c.Now)
	}
	out := make(map[string]upstream.Approval, len(states))
	for tool, st := range states {
		out[tool] = upstream.Approval(st)
	}
	return out, nil
}

// maxChangeRows is how many tools that became unapproved one listing of a
// server puts on record one by one; one more row counts the rest. A server
// that renames every tool at each listing (list_changed lets it list once a
// second) would otherwise write a row per tool per listing.
const maxChangeRows = 16

// definitionChangeReason is the audit reason of a tool that became
// unapproved.
func definitionChangeReason(server string, c store.DefinitionChange) string {
	fix := "; withheld until clawd mcp approve " + server + " " + c.Exposed
	if c.State == store.DefinitionNew {
		return "definition_changed: new tool, sha256 " + c.Now + fix
	}
	return "definition_changed: sha256 " + c.Approved + " -> " + c.Now + " (clawd mcp diff " + server + ")" + fix
}

// recordUpstreamEvent queues one upstream row the daemon built (step
// "upstream", transport "daemon") behind the manager's events, so they are
// on record in the order they happened. Without upstream servers running
// there is nothing to record.
func (d *Daemon) recordUpstreamEvent(r chain.AuditRecord) {
	if d.upstreamAudit != nil {
		d.upstreamAudit.addRecord(r)
	}
}
