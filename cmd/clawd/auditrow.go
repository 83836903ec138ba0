package main

import (
	"fmt"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/secrets"
)

// cliRow is the audit row of an upstream or egress change the command line
// makes: entity local:cli, step upstream, transport cli, toolID
// "mcp:SERVER", "mcp:SERVER/TOOL" or "egress:ORIGIN" (docs/upstreams.md,
// "Audit"). reason must already be safe to store: callers mask free text
// (a command line) with secrets.MaskText; hashes and origins need no mask.
//
// It fails closed, as a tool call's row does: confirm, passed to the
// store's change (store.RunConfirms), writes the row inside the change's
// transaction before it commits, and its error rolls the change back, so
// nothing is approved or withdrawn without its row. done, after the
// change returns, records its outcome on the row.
type cliRow struct {
	toolID string
	result string
	reason string
	start  time.Time
	log    *store.Writer // the audit log, opened before the change's transaction
	logErr error         // why it could not be opened: confirm fails with it
	w      *store.Writer // set once the row is written
	seq    int64
}

// auditCLI opens the audit log now, before the change's transaction: the
// first open folds what a crashed clawd left in its journal, a write that
// would wait for the write lock the change's transaction holds.
func auditCLI(db *store.DB, toolID, result, reason string) *cliRow {
	r := &cliRow{toolID: toolID, result: result, reason: reason, start: time.Now()}
	r.log, r.logErr = db.Audit()
	return r
}

// confirm writes the row (durably, to the audit journal).
func (r *cliRow) confirm() error {
	w, err := r.log, r.logErr
	if err == nil {
		var seq int64
		seq, err = w.Record(&chain.AuditRecord{Time: r.start, EntityID: "local:cli", ToolID: r.toolID,
			TrustLevel: chain.NoTrustLevel, Result: r.result, Reason: r.reason, Step: "upstream", Transport: "cli",
			AwaitsOutcome: true})
		if err == nil {
			r.w, r.seq = w, seq
			return nil
		}
	}
	return fmt.Errorf("the change was not made: its audit row (%s) could not be written: %v; clawd changes what it trusts only on record", r.toolID, err)
}

// server is the row as the store.Confirm of a change to a server's row
// (mcp add, rm, enable, disable, set): describe says what changed, from
// the row before and after; it is masked here.
func (r *cliRow) server(describe func(before, after store.MCPServer) string) store.Confirm {
	return func(before, after store.MCPServer) error {
		r.reason = oneLine(secrets.MaskText(describe(before, after)), 500)
		return r.confirm()
	}
}

// done records how the change ended on the row, if it was written.
func (r *cliRow) done(err error) {
	if r.w == nil {
		return
	}
	o := chain.Outcome{Result: chain.OutcomeOK, Duration: time.Since(r.start)}
	if err != nil {
		o.Result, o.Detail = chain.OutcomeError, "not made: "+oneLine(err.Error(), 200)
	}
	r.w.RecordOutcome(r.seq, o)
}
