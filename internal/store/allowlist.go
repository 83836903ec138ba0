package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"

	"github.com/clawde/clawd/internal/chain"
)

// AllowRow is one supply-chain allowlist entry.
type AllowRow struct {
	Server  string `json:"server_id"`
	SHA256  string `json:"sha256"`
	AddedAt string `json:"added_at"`
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ValidateSHA256 checks a lowercase hex SHA-256.
func ValidateSHA256(s string) error {
	if !sha256Hex.MatchString(s) {
		return fmt.Errorf("sha256 %q: expected 64 hexadecimal digits (e.g. the output of `sha256sum BINARY`)", s)
	}
	return nil
}

// AllowServer adds (server, sha256) to the allowlist; added is false if it
// was there already.
func (db *DB) AllowServer(ctx context.Context, server, sum string) (added bool, err error) {
	if err := chain.ValidateServerID(server); err != nil {
		return false, err
	}
	if err := ValidateSHA256(sum); err != nil {
		return false, err
	}
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO cd_mcp_server_allowlist (server_id, sha256, added_at) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, server, sum, now())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		added = n > 0
		return err
	})
	return added, err
}

// DisallowServer removes a server's entries: the one hash, or all when sum
// is empty, and then also its pins. It returns how many were removed.
// When it removes any, each confirm runs before the commit (RunConfirms).
func (db *DB) DisallowServer(ctx context.Context, server, sum string, confirm ...func() error) (int64, error) {
	var n int64
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		q, args := `DELETE FROM cd_mcp_server_allowlist WHERE server_id = ?`, []any{server}
		if sum != "" {
			q, args = q+` AND sha256 = ?`, append(args, sum)
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		if sum == "" {
			// All of the server's hashes: its pins (script, package) too.
			m, err := unpin(ctx, tx, server)
			if err != nil {
				return err
			}
			n += m
		}
		if n == 0 {
			return nil
		}
		return RunConfirms(confirm)
	})
	if err != nil {
		n = 0
	}
	return n, err
}

// Allowlist lists the supply-chain allowlist by server and hash.
func (db *DB) Allowlist(ctx context.Context) ([]AllowRow, error) {
	return readAllowlist(ctx, db.rdb)
}

func readAllowlist(ctx context.Context, q querier) ([]AllowRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT server_id, sha256, added_at FROM cd_mcp_server_allowlist ORDER BY server_id, sha256`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AllowRow
	for rows.Next() {
		var a AllowRow
		if err := rows.Scan(&a.Server, &a.SHA256, &a.AddedAt); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
