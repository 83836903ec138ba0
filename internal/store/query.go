package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// AuditRow is one audit log row as `clawd audit` shows it.
type AuditRow struct {
	ID            int64   `json:"id"`
	Timestamp     string  `json:"timestamp"`
	EntityID      string  `json:"entity_id"`
	ToolID        string  `json:"tool_id"`
	TrustLevel    *int64  `json:"trust_level"`
	Result        string  `json:"result"`
	Reason        string  `json:"reason"`
	LatencyMS     int64   `json:"latency_ms"`
	LatencyUS     int64   `json:"latency_us"`
	Step          string  `json:"step"`
	Transport     string  `json:"transport"`
	RequestID     string  `json:"request_id"`
	PID           int64   `json:"pid"`
	Outcome       *string `json:"outcome"`
	OutcomeDetail *string `json:"outcome_detail"`
	DurationMS    *int64  `json:"duration_ms"`
	// ClientClaim is the client's clientInfo.name: what it said it is,
	// which never raised its trust.
	ClientClaim  *string `json:"client_claim"`
	CredentialID *string `json:"credential_id"`
	// ArgsSHA256 is the SHA-256 of the arguments as sent; ArgsSummary a
	// short, secret-masked account of them (path, command's first line).
	ArgsSHA256  *string `json:"args_sha256"`
	ArgsSummary *string `json:"args_summary"`
	// Server is the upstream server of a proxied call (NULL for built-in
	// tools and rows written before clawd recorded it).
	Server *string `json:"server"`
}

// AuditFilter selects rows. Empty fields match everything; an Entity of
// the form "kind:*" matches every entity of that kind.
type AuditFilter struct {
	Limit  int // the newest Limit rows; <= 0 means all
	Entity string
	Tool   string
	Result string // "Allow" or "Deny"
	PID    int64  // rows written by one process; 0 = any
	// Server selects one upstream server's rows (ServerFilter).
	Server string
	// Since keeps rows at or after this time; AfterID rows with a larger
	// id (for following the log). Zero values select all.
	Since   time.Time
	AfterID int64
}

// QueryAudit returns the newest matching rows, oldest first (like a log's
// tail). It first folds the decision journals (syncJournals), so every
// decision recorded before it began is among the rows it reads, unless a
// live process could not fold its journal within syncWait.
func (db *DB) QueryAudit(ctx context.Context, f AuditFilter) ([]AuditRow, error) {
	db.syncJournals(ctx)
	where, args := auditConditions(f)
	q := `SELECT id, timestamp, entity_id, tool_id, trust_level, result, reason, latency_ms, latency_us,
		step, transport, request_id, pid, outcome, outcome_detail, duration_ms, client_claim, credential_id,
		args_sha256, args_summary, server
		FROM cd_policy_audit_log`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := db.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AuditRow
	for rows.Next() {
		r, err := scanAuditRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// auditConditions is f's WHERE conditions (joined with AND) and their
// arguments.
func auditConditions(f AuditFilter) (where []string, args []any) {
	if f.Entity != "" {
		if kind, ok := strings.CutSuffix(f.Entity, ":*"); ok {
			where = append(where, `substr(entity_id, 1, ?) = ?`)
			args = append(args, len(kind)+1, kind+":")
		} else {
			where = append(where, `entity_id = ?`)
			args = append(args, f.Entity)
		}
	}
	if f.Tool != "" {
		where = append(where, `tool_id = ?`)
		args = append(args, f.Tool)
	}
	if f.Result != "" {
		where = append(where, `result = ?`)
		args = append(args, f.Result)
	}
	if !f.Since.IsZero() {
		where = append(where, `timestamp >= ?`)
		args = append(args, formatTime(f.Since))
	}
	if f.AfterID > 0 {
		where = append(where, `id > ?`)
		args = append(args, f.AfterID)
	}
	if f.PID != 0 {
		where = append(where, `pid = ?`)
		args = append(args, f.PID)
	}
	if f.Server != "" {
		w, a := serverFilter(f.Server)
		where = append(where, w)
		args = append(args, a...)
	}
	return where, args
}

// scanAuditRow reads one row of QueryAudit's SELECT; a NULL column is a
// nil field.
func scanAuditRow(rows *sql.Rows) (AuditRow, error) {
	var r AuditRow
	var level, dur sql.NullInt64
	var outcome, detail, claim, cred, digest, summary, server sql.NullString
	if err := rows.Scan(&r.ID, &r.Timestamp, &r.EntityID, &r.ToolID, &level, &r.Result, &r.Reason,
		&r.LatencyMS, &r.LatencyUS, &r.Step, &r.Transport, &r.RequestID, &r.PID, &outcome, &detail, &dur,
		&claim, &cred, &digest, &summary, &server); err != nil {
		return r, err
	}
	r.ArgsSHA256 = nullString(digest)
	r.ArgsSummary = nullString(summary)
	r.ClientClaim = nullString(claim)
	r.Server = nullString(server)
	r.CredentialID = nullString(cred)
	r.Outcome = nullString(outcome)
	r.OutcomeDetail = nullString(detail)
	r.TrustLevel = nullInt(level)
	r.DurationMS = nullInt(dur)
	return r, nil
}

func nullString(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

func nullInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// serverFilter is the condition of AuditFilter.Server, for a server NAME
// (names are unique without regard to case, so matching is too):
//
//   - its events: tool_id "mcp:NAME" or "mcp:NAME/TOOL" (spawn, connect,
//     refusals, approvals; docs/upstreams.md, "Audit");
//   - its proxied calls: the server column, whatever the exposed name was
//     (hash-shortened names of long server names have no NAME__ prefix);
//   - rows without a server (written before the column existed, or calls
//     of an unknown tool) whose tool_id starts with NAME__: a server name
//     has no "__" and does not end in '_', so "a__" never matches the
//     tools of server "a_b" or "a__b".
//
// Prefixes are compared with substr, not LIKE, where '_' is a wildcard.
func serverFilter(name string) (string, []any) {
	ev, evTool, plain := "mcp:"+name, "mcp:"+name+"/", name+"__"
	return `(tool_id = ? COLLATE NOCASE OR substr(tool_id, 1, ?) = ? COLLATE NOCASE
		OR server = ? COLLATE NOCASE
		OR (server IS NULL AND substr(tool_id, 1, ?) = ? COLLATE NOCASE))`,
		[]any{ev, len(evTool), evTool, name, len(plain), plain}
}

// PruneAudit deletes the audit rows older than before, except the newest
// row, and returns how many went. Rows are only ever removed this way, on
// the user's command: the daemon never prunes on its own. Each confirm is
// called inside the transaction, with the count, before it commits: its
// error undoes the prune (the caller puts the prune itself on record
// there, so no row goes without a row that says so).
//
// The newest row stays because SQLite gives a new row the largest id plus
// one: without it the next rows would get ids given before, and an outcome
// still to come for a pruned row (a call running during the prune) would be
// written onto another call's row, and `clawd audit --follow`, which reads
// the rows after the last id it showed, would miss them.
func (db *DB) PruneAudit(ctx context.Context, before time.Time, confirm ...func(deleted int64) error) (int64, error) {
	db.syncJournals(ctx) // a journaled row older than before is pruned too
	var n int64
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM cd_policy_audit_log WHERE timestamp < ?
			AND id < (SELECT max(id) FROM cd_policy_audit_log)`, formatTime(before))
		if err != nil {
			return fmt.Errorf("pruning the audit log: %w", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		return runConfirms(confirm, func(c func(int64) error) error { return c(n) })
	})
	return n, err
}

// syncJournals has the decision journals folded before the audit log is
// read (Writer.Sync). A failure is logged, not returned: the rows already
// in the table are still worth reading, and the journals stay for the next
// fold.
func (db *DB) syncJournals(ctx context.Context) {
	w, err := db.Audit()
	if err == nil {
		err = w.Sync(ctx)
	}
	if err != nil && !errors.Is(err, ErrWriterClosed) {
		db.opts.Logger.Warn("audit journals not folded before reading the audit log", "err", err)
	}
}
