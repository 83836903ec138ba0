package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/clawde/clawd/internal/chain"
)

// Binding statuses: what a bound tool refers to when the binding is saved
// (`clawd trust bind`). Connected, stale and unavailable are saved; orphan
// is refused.
const (
	// BindConnected: the server is connected and lists the tool.
	BindConnected = "connected"
	// BindStale: the server is offline or reconnecting; the tool is known
	// from its last tool list.
	BindStale = "stale"
	// BindUnavailable: the server is disabled or cannot run until the user
	// acts (not allowlisted, a missing variable, gave up retrying).
	BindUnavailable = "unavailable"
	// BindOrphan: no such server, or the server never listed the tool.
	BindOrphan = "orphan"
)

// BindingStatus is one tool of a binding as CheckBinding found it.
type BindingStatus struct {
	Tool   string `json:"tool"`
	Status string `json:"status"`
	Server string `json:"server,omitempty"`
	// Detail says why, and for an orphan what to do.
	Detail string `json:"detail"`
}

// CheckBinding says what tool (an exposed upstream tool name, or SERVER__*
// for every tool of a server) refers to now. A tool is found in the tools
// cache the daemon writes (by its exposed name, or SERVER__NAME); a
// pattern by the server's exact name, as Evaluate matches it.
func (db *DB) CheckBinding(ctx context.Context, tool string) (BindingStatus, error) {
	b := BindingStatus{Tool: tool}
	servers, err := db.MCPServers(ctx)
	if err != nil {
		return b, err
	}
	byName := map[string]MCPServer{}
	for _, s := range servers {
		if !s.Builtin {
			byName[s.Name] = s
		}
	}
	if name, ok := strings.CutSuffix(tool, chain.ServerPatternSuffix); ok {
		s, found := byName[name]
		if !found {
			b.Status, b.Detail = BindOrphan, "no upstream server is named "+name+noServerFix(byName, name)
			return b, nil
		}
		b.Server = s.Name
		b.Status, b.Detail = serverBindStatus(s)
		return b, nil
	}
	cached, err := db.cachedToolNames(ctx)
	if err != nil {
		return b, err
	}
	for server, names := range cached {
		for _, n := range names {
			if n == tool { // the cache holds exposed names
				b.Server = server
				b.Status, b.Detail = serverBindStatus(byName[server])
				return b, nil
			}
		}
	}
	b.Status = BindOrphan
	prefix, _, hasPrefix := strings.Cut(tool, "__")
	s, found := byName[prefix]
	switch {
	case !hasPrefix || !found:
		b.Detail = "no upstream server offers a tool " + tool + " (upstream tools are named SERVER__TOOL)" + noServerFix(byName, prefix)
	case len(cached[s.Name]) == 0:
		b.Server = s.Name
		b.Detail = fmt.Sprintf("server %s has not listed its tools yet (it never connected), so %s cannot be checked; bind %s__* instead, or connect it first (start clawd serve, or clawd mcp refresh %s with a daemon running)",
			s.Name, tool, s.Name, s.Name)
	default:
		b.Server = s.Name
		have := cached[s.Name]
		sort.Strings(have)
		if len(have) > 10 {
			have = append(have[:10], "...")
		}
		b.Detail = fmt.Sprintf("server %s lists no tool %s (it has: %s); 'clawd mcp tools %s' shows the exact names",
			s.Name, tool, strings.Join(have, ", "), s.Name)
	}
	return b, nil
}

func noServerFix(byName map[string]MCPServer, near string) string {
	for n := range byName {
		if strings.EqualFold(n, near) {
			return "; names are case-sensitive here: did you mean " + n + "?"
		}
	}
	return "; 'clawd mcp list' shows the servers"
}

// serverBindStatus classifies a server for a binding.
func serverBindStatus(s MCPServer) (status, detail string) {
	switch {
	case !s.Enabled:
		return BindUnavailable, "server " + s.Name + " is disabled; the binding applies once it is enabled (clawd mcp enable " + s.Name + ")"
	case s.LastStatus == StatusConnected:
		return BindConnected, "server " + s.Name + " is connected"
	case s.LastStatus == StatusUnavailable || s.LastStatus == StatusError || s.LastStatus == StatusDisabled:
		return BindUnavailable, "server " + s.Name + " cannot run now (" + s.LastStatus + "; 'clawd mcp show " + s.Name +
			"' says why); the binding applies once it runs"
	}
	return BindStale, "server " + s.Name + " is " + s.LastStatus + "; the tool is known from its last tool list, and the binding applies once it is back"
}

// cachedToolNames is every server's cached tool names, by server name.
func (db *DB) cachedToolNames(ctx context.Context) (map[string][]string, error) {
	rows, err := db.rdb.QueryContext(ctx, `SELECT s.name, t.name FROM cd_mcp_server_tool t JOIN cd_mcp_server s ON s.id = t.server_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var server, name string
		if err := rows.Scan(&server, &name); err != nil {
			return nil, err
		}
		out[server] = append(out[server], name)
	}
	return out, rows.Err()
}

// ErrNoTrustRow: neither the entity's own row nor its KIND:* row exists.
var ErrNoTrustRow = errors.New("no trust registry row")

// TrustConfirm is called inside a trust registry change's transaction once
// the change is written and before it commits, with the entity's own row
// before and after (Entity "" for none: a new row, a removal). Its error
// rolls the change back and is what the change returns: the caller puts
// the change's audit row on record there, so the registry does not change
// without its row (as Confirm for server rows).
type TrustConfirm func(before, after chain.TrustEntry) error

// UpdateTrust changes an entity's row in one write transaction: fn gets the
// row that applies to the entity now (its own, else its KIND:* row; from
// says which, "" if neither) and returns the entity's new row, which is
// validated and written under the entity's own id, then confirmed.
// Reading and writing in one transaction means a concurrent change is not
// lost.
func (db *DB) UpdateTrust(ctx context.Context, entity string, fn func(cur chain.TrustEntry, from string) (chain.TrustEntry, error), confirm ...TrustConfirm) error {
	return db.writeTx(ctx, func(tx *sql.Tx) error {
		cur, from, err := applyingRow(ctx, tx, entity)
		if err != nil {
			return err
		}
		next, err := fn(cur, from)
		if err != nil {
			return err
		}
		next.Entity = entity
		if err := ValidateTrust(next); err != nil {
			return err
		}
		perms := next.Perms
		if perms == nil {
			perms = map[string]string{}
		}
		b, err := json.Marshal(perms)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO cd_trust_registry (entity_id, trust_level, permissions, updated_at)
			VALUES (?, ?, ?, ?)
			ON CONFLICT (entity_id) DO UPDATE SET trust_level = excluded.trust_level,
				permissions = excluded.permissions, updated_at = excluded.updated_at`,
			entity, next.Level, string(b), now())
		if err != nil {
			return err
		}
		var before chain.TrustEntry
		if from == entity {
			before = cur
		}
		next.Perms = perms
		return runConfirms(confirm, func(c TrustConfirm) error { return c(before, next) })
	})
}

// applyingRow reads the row Lookup would use for entity.
func applyingRow(ctx context.Context, tx *sql.Tx, entity string) (chain.TrustEntry, string, error) {
	ids := []string{entity}
	if kind, _, ok := strings.Cut(entity, ":"); ok && !strings.HasSuffix(entity, ":*") {
		ids = append(ids, kind+":*")
	}
	for _, id := range ids {
		var level int
		var perms string
		err := tx.QueryRowContext(ctx, `SELECT trust_level, permissions FROM cd_trust_registry WHERE entity_id = ?`, id).Scan(&level, &perms)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return chain.TrustEntry{}, "", err
		}
		e := chain.TrustEntry{Entity: id, Level: level, Perms: parsePerms(perms)}
		if e.Perms == nil {
			e.Level, e.Perms = 0, map[string]string{} // as readTrust: unreadable grants nothing
		}
		return e, id, nil
	}
	return chain.TrustEntry{Entity: entity, Perms: map[string]string{}}, "", nil
}
