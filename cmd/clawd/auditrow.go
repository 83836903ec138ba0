package main

import (
	"fmt"
	"io"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
)

// auditCLI writes the audit row of an upstream or egress change the command
// line made: entity local:cli, step upstream, transport cli, toolID
// "mcp:SERVER", "mcp:SERVER/TOOL" or "egress:ORIGIN" (docs/upstreams.md,
// "Audit"). reason must already be safe to store: callers mask free text
// (a command line) with secrets.MaskText; hashes and origins need no mask.
// A failure is reported on stderr, not fatal: the change itself is stored.
func auditCLI(stderr io.Writer, db *store.DB, toolID, result, reason string) {
	w, err := db.Audit()
	if err == nil {
		_, err = w.Record(&chain.AuditRecord{Time: time.Now(), EntityID: "local:cli", ToolID: toolID,
			TrustLevel: chain.NoTrustLevel, Result: result, Reason: reason, Step: "upstream", Transport: "cli"})
	}
	if err != nil {
		fmt.Fprintf(stderr, "clawd: warning: the change was made but its audit row (%s) could not be written: %v\n", toolID, err)
	}
}
