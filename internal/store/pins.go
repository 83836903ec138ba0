package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/clawde/clawd/internal/chain"
)

// Pin kinds: what an approved stdio upstream runs beyond its executable.
const (
	PinScript  = "script"  // the script an interpreter runs: Digest is its SHA-256
	PinPackage = "package" // the package npx runs: Subject NAME@VERSION, Digest its integrity
)

// PinRow is one pin (cd_mcp_server_pin). The executable's own hash is an
// AllowRow.
type PinRow struct {
	Server  string `json:"server_id"`
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Digest  string `json:"digest"`
	Detail  string `json:"detail"`
	AddedAt string `json:"added_at"`
}

var integrityRe = regexp.MustCompile(`^sha(256|384|512)-[A-Za-z0-9+/]{20,}={0,2}$`)

// ValidatePin checks a pin's fields, naming what is wrong.
func ValidatePin(p PinRow) error {
	if err := chain.ValidateServerID(p.Server); err != nil {
		return err
	}
	switch p.Kind {
	case PinScript:
		if p.Subject != "" {
			return fmt.Errorf("a script pin has no subject (got %q)", p.Subject)
		}
		if err := ValidateSHA256(p.Digest); err != nil {
			return fmt.Errorf("script %w", err)
		}
	case PinPackage:
		at := strings.LastIndex(p.Subject, "@")
		if at <= 0 || at == len(p.Subject)-1 || len(p.Subject) > 256 || strings.IndexFunc(p.Subject, unicode.IsSpace) >= 0 {
			return fmt.Errorf("package %q: expected NAME@VERSION, e.g. @modelcontextprotocol/server-everything@2026.8.31", p.Subject)
		}
		if !integrityRe.MatchString(p.Digest) {
			return fmt.Errorf("integrity %q: expected an npm integrity string, sha512-<base64> (as in package-lock.json)", p.Digest)
		}
	default:
		return fmt.Errorf("pin kind %q: use %s or %s", p.Kind, PinScript, PinPackage)
	}
	if len(p.Detail) > 4096 {
		return fmt.Errorf("pin detail: at most 4096 bytes")
	}
	return nil
}

// Approve records consent to run a stdio server: the executable's SHA-256
// on the allowlist and every pin, in one transaction, so a daemon never
// sees half an approval. added reports whether anything was new. Each
// confirm runs before the commit, whether or not anything was new
// (RunConfirms).
func (db *DB) Approve(ctx context.Context, server, execSHA256 string, pins []PinRow, confirm ...func() error) (added bool, err error) {
	if err := chain.ValidateServerID(server); err != nil {
		return false, err
	}
	if err := ValidateSHA256(execSHA256); err != nil {
		return false, err
	}
	for i := range pins {
		pins[i].Server = server
		if err := ValidatePin(pins[i]); err != nil {
			return false, err
		}
	}
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		t := now()
		res, err := tx.ExecContext(ctx, `INSERT INTO cd_mcp_server_allowlist (server_id, sha256, added_at) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, server, execSHA256, t)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n > 0 {
			added = true
		}
		for _, p := range pins {
			res, err := tx.ExecContext(ctx, `INSERT INTO cd_mcp_server_pin (server_id, kind, subject, digest, detail, added_at)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				server, p.Kind, p.Subject, p.Digest, p.Detail, t)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				added = true
			} else if p.Detail != "" {
				// Already pinned: only learn where it is, if not known.
				if _, err := tx.ExecContext(ctx, `UPDATE cd_mcp_server_pin SET detail = ? WHERE server_id = ? AND kind = ?
					AND subject = ? AND digest = ? AND detail = ''`, p.Detail, server, p.Kind, p.Subject, p.Digest); err != nil {
					return err
				}
			}
		}
		return RunConfirms(confirm)
	})
	if err != nil {
		added = false
	}
	return added, err
}

// Pins lists the pins of server, or of every server when server is "".
func (db *DB) Pins(ctx context.Context, server string) ([]PinRow, error) {
	return readPins(ctx, db.rdb, server)
}

// PinAllowed reports whether (server, kind, subject, digest) is pinned,
// from the same snapshot as ServerAllowed.
func (db *DB) PinAllowed(server, kind, subject, digest string) (bool, error) {
	s, err := db.current()
	if err != nil {
		return false, err
	}
	return s.pins[pinKey(server, kind, subject, digest)], nil
}

// LaunchAllowed answers, from one snapshot of the registry, whether the
// executable's SHA-256 is allowed for server and, for each of pins, whether
// it is pinned for it: separate reads could pair an executable approved
// before a change with pins approved after it, a combination nobody
// approved at any one time.
func (db *DB) LaunchAllowed(server, execSHA256 string, pins []PinRow) (execOK bool, pinned []bool, err error) {
	s, err := db.current()
	if err != nil {
		return false, nil, err
	}
	pinned = make([]bool, len(pins))
	for i, p := range pins {
		pinned[i] = s.pins[pinKey(server, p.Kind, p.Subject, p.Digest)]
	}
	return s.allow[allowKey(server, execSHA256)], pinned, nil
}

// ScriptAllowed implements chain.ScriptAllowlist: the script pins of the
// server.
func (db *DB) ScriptAllowed(server, sha256 string) (bool, error) {
	return db.PinAllowed(server, PinScript, "", sha256)
}

// Unpin removes a server's pins (all of them); DisallowServer calls it
// when it removes all of a server's hashes.
func unpin(ctx context.Context, tx *sql.Tx, server string) (int64, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM cd_mcp_server_pin WHERE server_id = ?`, server)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func pinKey(server, kind, subject, digest string) string {
	return server + "\x00" + kind + "\x00" + subject + "\x00" + digest
}

func readPins(ctx context.Context, q querier, server string) ([]PinRow, error) {
	query, args := `SELECT server_id, kind, subject, digest, detail, added_at FROM cd_mcp_server_pin`, []any{}
	if server != "" {
		query, args = query+` WHERE server_id = ?`, append(args, server)
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY server_id, kind, subject, digest`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PinRow
	for rows.Next() {
		var p PinRow
		if err := rows.Scan(&p.Server, &p.Kind, &p.Subject, &p.Digest, &p.Detail, &p.AddedAt); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
