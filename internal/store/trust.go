package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/clawde/clawd/internal/chain"
)

// TrustRow is a trust registry row as `clawd trust list` shows it.
type TrustRow struct {
	chain.TrustEntry
	UpdatedAt string
}

// snapshot is the registry and allowlist as of one generation. A daemon
// answers every lookup from it after a one-row read of the generation.
type snapshot struct {
	gen   int64
	trust map[string]chain.TrustEntry
	allow map[string]bool // allowKey(server, sha256)
	pins  map[string]bool // server, kind, subject, digest joined by "\x00"
	creds map[string]credEntry
	// egress: origin (netguard.Origin.String) -> its private flag.
	egress map[string]bool
}

// Lookup implements chain.TrustStore: the exact row, else "kind:*". It
// sees a change made by any process (e.g. `clawd trust set`) FreshFor
// (20 ms) after it committed: the cached snapshot is used only while the
// generation is unchanged.
func (db *DB) Lookup(entity string) (chain.TrustEntry, bool, error) {
	s, err := db.current()
	if err != nil {
		return chain.TrustEntry{}, false, err
	}
	return chain.LookupIn(s.trust, entity)
}

// ServerAllowed implements chain.Allowlist.
func (db *DB) ServerAllowed(server, sha256 string) (bool, error) {
	s, err := db.current()
	if err != nil {
		return false, err
	}
	return s.allow[allowKey(server, sha256)], nil
}

// allowKey is the key of the snapshot's allow map, for every reader and
// the writer alike: a hex SHA-256 holds no NUL, so no two pairs share a key.
func allowKey(server, sha256 string) string { return server + "\x00" + sha256 }

// current returns the snapshot of a generation at most FreshFor old.
func (db *DB) current() (*snapshot, error) {
	gen, err := db.freshGeneration()
	if err != nil {
		return nil, fmt.Errorf("trust registry: %w", err)
	}
	if s := db.snap.Load(); s != nil && s.gen == gen {
		return s, nil
	}
	db.snapMu.Lock()
	defer db.snapMu.Unlock()
	if s := db.snap.Load(); s != nil && s.gen >= gen {
		return s, nil
	}
	s, err := db.loadSnapshot(context.Background())
	if err != nil {
		return nil, fmt.Errorf("trust registry: %w", err)
	}
	db.snap.Store(s)
	return s, nil
}

// loadSnapshot reads the generation, the registry and the allowlist in one
// read transaction, so they are consistent with each other.
func (db *DB) loadSnapshot(ctx context.Context) (*snapshot, error) {
	tx, err := db.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	s := &snapshot{trust: map[string]chain.TrustEntry{}, allow: map[string]bool{}, creds: map[string]credEntry{}, egress: map[string]bool{}, pins: map[string]bool{}}
	if err := tx.QueryRowContext(ctx, `SELECT n FROM cd_generation WHERE id = 1`).Scan(&s.gen); err != nil {
		return nil, err
	}
	rows, err := readTrust(ctx, tx)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		s.trust[r.Entity] = r.TrustEntry
	}
	list, err := readAllowlist(ctx, tx)
	if err != nil {
		return nil, err
	}
	for _, a := range list {
		s.allow[allowKey(a.Server, a.SHA256)] = true
	}
	pins, err := readPins(ctx, tx, "")
	if err != nil {
		return nil, err
	}
	for _, p := range pins {
		s.pins[pinKey(p.Server, p.Kind, p.Subject, p.Digest)] = true
	}
	if err := readCredentials(ctx, tx, s.creds); err != nil {
		return nil, err
	}
	eg, err := readEgress(ctx, tx)
	if err != nil {
		return nil, err
	}
	for _, e := range eg {
		s.egress[e.Origin] = e.Private
	}
	return s, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func readTrust(ctx context.Context, q querier) ([]TrustRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT entity_id, trust_level, permissions, updated_at FROM cd_trust_registry ORDER BY entity_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TrustRow
	for rows.Next() {
		var r TrustRow
		var perms string
		if err := rows.Scan(&r.Entity, &r.Level, &perms, &r.UpdatedAt); err != nil {
			return nil, err
		}
		r.Perms = parsePerms(perms)
		if r.Perms == nil {
			// A row edited by hand into something unreadable must not
			// widen access: it grants nothing.
			r.Level = 0
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// parsePerms reads a permissions object. Values are "allow", "deny" or
// "bind" (clawd trust bind); anything else (a hand edit) counts as "deny".
// Nil means unreadable.
func parsePerms(s string) map[string]string {
	var raw map[string]any
	if err := json.Unmarshal([]byte(s), &raw); err != nil || raw == nil {
		return nil
	}
	out := make(map[string]string, len(raw))
	for tool, v := range raw {
		str, _ := v.(string)
		switch strings.ToLower(str) {
		case chain.PermAllow:
			out[tool] = chain.PermAllow
		case chain.PermBind:
			out[tool] = chain.PermBind
		default:
			out[tool] = chain.PermDeny
		}
	}
	return out
}

// TrustRows lists the registry sorted by entity.
func (db *DB) TrustRows(ctx context.Context) ([]TrustRow, error) {
	return readTrust(ctx, db.rdb)
}

// SetTrust creates or replaces an entity's row: its level and exactly the
// given per-tool permissions.
func (db *DB) SetTrust(ctx context.Context, e chain.TrustEntry) error {
	if err := ValidateTrust(e); err != nil {
		return err
	}
	perms := e.Perms
	if perms == nil {
		perms = map[string]string{}
	}
	b, err := json.Marshal(perms) // map keys are sorted: stable text
	if err != nil {
		return err
	}
	return db.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cd_trust_registry (entity_id, trust_level, permissions, updated_at)
			VALUES (?, ?, ?, ?)
			ON CONFLICT (entity_id) DO UPDATE SET trust_level = excluded.trust_level,
				permissions = excluded.permissions, updated_at = excluded.updated_at`,
			e.Entity, e.Level, string(b), now())
		return err
	})
}

// ValidateTrust checks a row before it is written.
func ValidateTrust(e chain.TrustEntry) error {
	if err := chain.ValidateEntity(e.Entity); err != nil {
		return err
	}
	if e.Level < 0 || e.Level > 3 {
		return fmt.Errorf("trust level %d: use 0 (nothing), 1 (read), 2 (read, write, execute) or 3 (also upstream tools)", e.Level)
	}
	names := make([]string, 0, len(e.Perms))
	for t := range e.Perms {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		if err := chain.ValidatePermKey(t); err != nil {
			return err
		}
		p := e.Perms[t]
		if p != chain.PermAllow && p != chain.PermDeny && p != chain.PermBind {
			return fmt.Errorf("tool %s: permission %q must be allow, deny or bind", t, p)
		}
		if p == chain.PermBind && !strings.Contains(t, "__") {
			return fmt.Errorf("tool %s: only upstream tools (SERVER__TOOL, SERVER__*) can be bound; clawd's own tools follow the trust level, or allow and deny", t)
		}
	}
	return nil
}

// RemoveTrust deletes an entity's row, confirmed (TrustConfirm, with the
// row before) when there was one; it reports whether one existed.
func (db *DB) RemoveTrust(ctx context.Context, entity string, confirm ...TrustConfirm) (bool, error) {
	var n int64
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		n = 0
		before, from, err := applyingRow(ctx, tx, entity)
		if err != nil || from != entity {
			return err // no row of its own: nothing to remove
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM cd_trust_registry WHERE entity_id = ?`, entity)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return runConfirms(confirm, func(c TrustConfirm) error { return c(before, chain.TrustEntry{}) })
	})
	return n > 0, err
}
