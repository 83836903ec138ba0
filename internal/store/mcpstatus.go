package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clawde/clawd/internal/support/safetext"
)

// ServerStatus is what the daemon records after a connection attempt.
type ServerStatus struct {
	Status string // one of Statuses
	// Error is the last error ("" clears it), cut to 4096 bytes. It is
	// stored as given and masked (secrets.MaskText) when shown; the caller
	// should not put resolved header or env values in it.
	Error string
	// ConnectedAt, when not zero, becomes last_connected_at.
	ConnectedAt time.Time
	// ToolCount is the number of tools discovered; negative keeps it.
	ToolCount int
}

// RecordServerStatus writes a server's status columns. It does not raise
// MCPServersGeneration: the writer is the daemon, which knows.
func (db *DB) RecordServerStatus(ctx context.Context, id int64, st ServerStatus) error {
	if err := checkStatus(st); err != nil {
		return err
	}
	return db.writeTx(ctx, func(tx *sql.Tx) error { return recordStatusTx(ctx, tx, id, st) })
}

// RecordServerConnected writes a server's status and makes its tools cache
// exactly tools (seen at seenAt), tool_count included, in one transaction,
// so no reader sees a server connected with the tool count or cache of
// the attempt before. st.ToolCount is ignored. Bad input (the status, or
// a tool as ReplaceServerTools checks it) writes nothing.
func (db *DB) RecordServerConnected(ctx context.Context, id int64, st ServerStatus, tools []MCPTool, seenAt time.Time) error {
	if err := checkStatus(st); err != nil {
		return err
	}
	if err := checkTools(tools); err != nil {
		return err
	}
	st.ToolCount = -1 // replaceToolsTx sets it
	return db.writeTx(ctx, func(tx *sql.Tx) error {
		if err := recordStatusTx(ctx, tx, id, st); err != nil {
			return err
		}
		return replaceToolsTx(ctx, tx, id, tools, seenAt)
	})
}

func checkStatus(st ServerStatus) error {
	if !slices.Contains(Statuses, st.Status) {
		return invalid("status %q: use one of %s", printable(st.Status, 40), strings.Join(Statuses, ", "))
	}
	return nil
}

// recordStatusTx is RecordServerStatus inside tx; the built-in row is
// refused as not found.
func recordStatusTx(ctx context.Context, tx *sql.Tx, id int64, st ServerStatus) error {
	msg := safetext.ValidUTF8(st.Error)
	if len(msg) > maxLastError {
		msg = printable(msg, maxLastError-3)
	}
	var connected any
	if !st.ConnectedAt.IsZero() {
		connected = formatTime(st.ConnectedAt)
	}
	res, err := tx.ExecContext(ctx, `UPDATE cd_mcp_server SET last_status = ?, last_error = ?,
		last_connected_at = COALESCE(?, last_connected_at),
		tool_count = CASE WHEN ? >= 0 THEN ? ELSE tool_count END
		WHERE id = ? AND builtin = 0`,
		st.Status, nullIfEmpty(msg), connected, st.ToolCount, st.ToolCount, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: %d (or it is the built-in row, whose status is fixed)", ErrServerNotFound, id)
	}
	return nil
}
