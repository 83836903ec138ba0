package store

import (
	"context"
	"database/sql"
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
	for _, c := range confirm {
		if err := c(); err != nil {
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
	for _, c := range confirm {
		if c == nil {
			continue
		}
		if err := c(before, after); err != nil {
			return err
		}
	}
	return nil
}
