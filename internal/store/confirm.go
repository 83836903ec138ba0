package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/clawde/clawd/internal/chain"
)

// Confirm is called inside a server change's transaction once the change
// is written and before it commits, with the row before (zero for an
// insert) and after (zero for a delete). Its error rolls the change back
// and is what the change returns. The caller puts the change's audit row
// on record here: a change whose row cannot be written is not made, and
// the row can name exactly what the transaction changed. Should the
// commit fail after Confirm succeeded, the row stands for a change not
// made; the caller records that as its outcome.
type Confirm func(before, after MCPServer) error

// RunConfirms runs the confirms of a change to what clawd trusts (the
// allowlist, pins, egress, tool approvals) inside its transaction, after
// the change is written and before it commits: the first error rolls the
// change back and is what the change returns. The caller puts its audit
// row on record there, so a change whose row cannot be written is not
// made (as Confirm for server rows).
func RunConfirms(confirm []func() error) error {
	return runConfirms(confirm, func(c func() error) error { return c() })
}

// runConfirms is the one runner of every change's confirms (RunConfirms,
// a server change's Confirm, ApproveTools', a trust change's, a
// credential's revocation, an audit prune): in order, nil ones skipped,
// each through call (which passes it what the change made); the first
// error stops it and is returned, for the change to roll back.
func runConfirms[F ~func() error | ~func([]ToolApproval) error | Confirm | TrustConfirm | ~func(Credential) error | ~func(int64) error](confirm []F, call func(F) error) error {
	for _, c := range confirm {
		if c == nil {
			continue
		}
		if err := call(c); err != nil {
			return err
		}
	}
	return nil
}

// confirmTx runs the confirms with before and the row id as tx now holds
// it (id 0: after is zero).
func confirmTx(ctx context.Context, tx *sql.Tx, confirm []Confirm, before MCPServer, id int64) error {
	if len(confirm) == 0 {
		return nil
	}
	var after MCPServer
	if id != 0 {
		var err error
		if after, err = getServer(ctx, tx, `id = ?`, id); err != nil {
			return err
		}
	}
	return runConfirms(confirm, func(c Confirm) error { return c(before, after) })
}

// ChangeActor is who makes a change to what clawd trusts, as the change's
// audit row names them: the command line (local:cli) or a REST caller.
type ChangeActor struct {
	Entity       string
	TrustLevel   int    // chain.NoTrustLevel when none applies
	Transport    string // "cli" or "rest"
	RequestID    string
	CredentialID string
}

// ChangeRecord is the audit row of a change to an upstream or egress by
// by at at, or of another event about one by them (a refusal): Step
// "upstream", toolID "mcp:SERVER",
// "mcp:SERVER/TOOL" or "egress:ORIGIN", result chain.ResultAllow or
// ResultDeny. reason must already be safe to store (masked and cut to
// size by the caller).
func ChangeRecord(by ChangeActor, at time.Time, toolID, result, reason string) *chain.AuditRecord {
	return &chain.AuditRecord{
		Time:         at,
		EntityID:     by.Entity,
		ToolID:       toolID,
		TrustLevel:   by.TrustLevel,
		Result:       result,
		Reason:       reason,
		Step:         "upstream",
		Transport:    by.Transport,
		RequestID:    by.RequestID,
		CredentialID: by.CredentialID,
	}
}

// ChangeRow puts one change to what clawd trusts on record, fail closed,
// as a tool call's decision is: Write, called from the change's confirm
// inside its transaction, stores the row durably before the change
// commits, and its error rolls the change back, so nothing changes
// without its row. Done, once the change returns, records on the row how
// it ended: ok, or error when the change failed after all (the commit).
type ChangeRow struct {
	log     chain.AuditLog
	start   time.Time
	detail  func(error) string
	seq     int64
	written bool
}

// NewChangeRow starts the record of a change now. detail is what the
// outcome says, after "not made: ", of the error that undid the change
// (the caller masks and cuts it as its rows need).
func NewChangeRow(log chain.AuditLog, detail func(error) string) *ChangeRow {
	return &ChangeRow{log: log, start: time.Now(), detail: detail}
}

// Start is when the change began: its outcome's duration counts from it.
func (c *ChangeRow) Start() time.Time { return c.start }

// Write stores rec as the change's row, which awaits Done's outcome.
func (c *ChangeRow) Write(rec *chain.AuditRecord) error {
	rec.AwaitsOutcome = true
	seq, err := c.log.Record(rec)
	if err != nil {
		return err
	}
	c.seq, c.written = seq, true
	return nil
}

// Done records err, the change's result, as the row's outcome, if the row
// was written.
func (c *ChangeRow) Done(err error) {
	if !c.written {
		return
	}
	o := chain.Outcome{Result: chain.OutcomeOK, Duration: time.Since(c.start)}
	if err != nil {
		o.Result, o.Detail = chain.OutcomeError, "not made: "+c.detail(err)
	}
	c.log.RecordOutcome(c.seq, o)
}
