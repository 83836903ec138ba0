package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"

	"github.com/clawde/clawd/internal/support/netguard"
)

// EgressRow is one egress allowlist entry: an origin a remote upstream
// server may be reached at.
type EgressRow struct {
	Origin string `json:"origin"` // scheme://host:port
	Scheme string `json:"scheme"`
	Host   string `json:"host"`
	Port   int    `json:"port"`
	// Private: private, link-local and reserved addresses (and loopback
	// under any name) may be dialled for this origin.
	Private bool   `json:"private"`
	AddedAt string `json:"added_at"`
}

// CheckEgressEntry says whether o may be allowlisted with this private
// flag: an address host is checked now (a name is checked at every dial,
// where its addresses are known). 0.0.0.0, :: and multicast are never
// allowed; a private, link-local or reserved address needs the flag.
func CheckEgressEntry(o netguard.Origin, private bool) error {
	a, ok := o.Addr()
	if !ok {
		return nil
	}
	if err := (netguard.Policy{Origin: o, Private: private}).Check(a); err != nil {
		c := netguard.Classify(a)
		if c == netguard.Unspecified || c == netguard.Multicast {
			return fmt.Errorf("%s is %s; clawd never connects there", o.Host, c.Describe())
		}
		return fmt.Errorf("%s is %s; if you mean it, allow it explicitly: %s", o.Host, c.Describe(), netguard.AllowCommand(o, true))
	}
	return nil
}

// AllowEgress adds o to the egress allowlist, or changes its private flag.
// changed is false when the same entry was there already. When it
// changes anything, each confirm runs before the commit (RunConfirms).
func (db *DB) AllowEgress(ctx context.Context, o netguard.Origin, private bool, confirm ...func() error) (changed bool, err error) {
	o, err = netguard.ParseOrigin(o.String()) // canonical, whoever built it
	if err != nil {
		return false, err
	}
	if err := CheckEgressEntry(o, private); err != nil {
		return false, err
	}
	return db.writeChange(ctx, confirm, `INSERT INTO cd_egress_allowlist (scheme, host, port, private, added_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (scheme, host, port) DO UPDATE SET private = excluded.private, added_at = excluded.added_at
		WHERE private <> excluded.private`, o.Scheme, o.Host, o.Port, boolInt(private), now())
}

// DisallowEgress removes o's entry; removed is false if there was none.
// When it removes one, each confirm runs before the commit (RunConfirms).
func (db *DB) DisallowEgress(ctx context.Context, o netguard.Origin, confirm ...func() error) (removed bool, err error) {
	return db.writeChange(ctx, confirm, `DELETE FROM cd_egress_allowlist WHERE scheme = ? AND host = ? AND port = ?`,
		o.Scheme, o.Host, o.Port)
}

// writeChange runs query, one change to what clawd trusts, in a write
// transaction and, when it changed a row, each confirm before the commit
// (RunConfirms). changed is whether it changed one and the confirms let
// the change stand.
func (db *DB) writeChange(ctx context.Context, confirm []func() error, query string, args ...any) (changed bool, err error) {
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n == 0 {
			return err
		}
		if err := RunConfirms(confirm); err != nil {
			return err
		}
		changed = true
		return nil
	})
	return changed, err
}

// EgressAllowlist lists the entries by origin.
func (db *DB) EgressAllowlist(ctx context.Context) ([]EgressRow, error) {
	return readEgress(ctx, db.rdb)
}

func readEgress(ctx context.Context, q querier) ([]EgressRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT scheme, host, port, private, added_at FROM cd_egress_allowlist ORDER BY host, port, scheme`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []EgressRow{}
	for rows.Next() {
		var r EgressRow
		if err := rows.Scan(&r.Scheme, &r.Host, &r.Port, &r.Private, &r.AddedAt); err != nil {
			return nil, err
		}
		r.Origin = netguard.Origin{Scheme: r.Scheme, Host: r.Host, Port: r.Port}.String()
		out = append(out, r)
	}
	return out, rows.Err()
}

// EgressPolicy returns the policy for connecting to o: ok is false when o
// is not allowlisted. It reads the daemon's snapshot (one indexed read of
// the change counter when nothing changed), like the trust registry.
func (db *DB) EgressPolicy(o netguard.Origin) (p netguard.Policy, ok bool, err error) {
	s, err := db.current()
	if err != nil {
		return netguard.Policy{}, false, err
	}
	private, ok := s.egress[o.String()]
	return netguard.Policy{Origin: o, Private: private}, ok, nil
}

// EgressOrigins is the whole allowlist as origin -> private flag, from
// the same snapshot as EgressPolicy (no SQL unless the change counter
// moved), for telling which entries a change touched. The map is the
// caller's.
func (db *DB) EgressOrigins() (map[string]bool, error) {
	s, err := db.current()
	if err != nil {
		return nil, err
	}
	return maps.Clone(s.egress), nil
}

// EgressAllowed implements chain.Egress.
func (db *DB) EgressAllowed(o netguard.Origin) (bool, error) {
	_, ok, err := db.EgressPolicy(o)
	return ok, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
