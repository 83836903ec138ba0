package main

import (
	"fmt"

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
	step   string           // "" for store.ChangeRecord's (upstream)
	row    *store.ChangeRow // over the audit log, opened before the change's transaction
	logErr error            // why the log could not be opened: confirm fails with it
}

// cliActor is who the command line's changes are by.
var cliActor = store.ChangeActor{Entity: "local:cli", TrustLevel: chain.NoTrustLevel, Transport: "cli"}

// auditCLI opens the audit log now, before the change's transaction: the
// first open folds what a crashed clawd left in its journal, a write that
// would wait for the write lock the change's transaction holds.
func auditCLI(db *store.DB, toolID, result, reason string) *cliRow {
	log, err := db.Audit()
	row := store.NewChangeRow(log, cliOutcomeDetail)
	return &cliRow{toolID: toolID, result: result, reason: reason, row: row, logErr: err}
}

// cliOutcomeDetail is what a row's outcome says of the error that undid
// its change. An error can quote what the change was given (a URL, a
// command line), so it is masked, as the REST API's rows are.
func cliOutcomeDetail(err error) string { return oneLine(secrets.MaskText(err.Error()), 200) }

// confirm writes the row (durably, to the audit journal).
func (r *cliRow) confirm() error {
	err := r.logErr
	if err == nil {
		rec := store.ChangeRecord(cliActor, r.row.Start(), r.toolID, r.result, r.reason)
		if r.step != "" {
			rec.Step = r.step
		}
		if err = r.row.Write(rec); err == nil {
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
func (r *cliRow) done(err error) { r.row.Done(err) }

// trustAudit is the audit row of a change to the trust registry by the
// command line (set, rm, bind, unbind): entity local:cli, tool
// "trust:ENTITY", step trust, reason "configure: " and the row after the
// change, with the one before ("(was ...)", "(new row)"); a removal is a
// Deny, "configure: removed (was ...)". Its confirm, passed to the change,
// writes the row before the change commits, and fails it when the row
// cannot be written: who may call what changes only on record.
func trustAudit(db *store.DB, entity string) (*cliRow, store.TrustConfirm) {
	r := auditCLI(db, "trust:"+entity, chain.ResultAllow, "")
	r.step = chain.StepTrust
	return r, func(before, after chain.TrustEntry) error {
		was := "(new row)"
		if before.Entity != "" {
			was = "(was " + describeTrust(before) + ")"
		}
		if after.Entity == "" {
			r.result, r.reason = chain.ResultDeny, "configure: removed "+was
		} else {
			r.reason = "configure: " + describeTrust(after) + " " + was
		}
		r.reason = oneLine(r.reason, 2000)
		return r.confirm()
	}
}

// describeTrust is a trust row in one line: level, allow, deny, bound.
func describeTrust(e chain.TrustEntry) string {
	allow, deny := permLists(e.Perms)
	return fmt.Sprintf("level %d; allow %s; deny %s; bound %s", e.Level, orDash(allow), orDash(deny), orDash(boundTools(e.Perms)))
}
