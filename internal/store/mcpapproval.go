package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Tool-definition states, as ToolApproval.State returns them (the same
// words as upstream.Approval).
const (
	DefinitionApproved = "approved"
	DefinitionNew      = "new"     // never approved
	DefinitionChanged  = "changed" // an earlier definition was approved
)

// ToolApproval is one upstream tool's pinned definitions: the one the
// daemon saw last (Seen*) and the one the user approved (Approved*; empty
// if never). Definitions are canonical JSON (RFC 8785) of the tool as the
// upstream sent it, before any cleaning, so they may hold any text: clean
// it before showing it (internal/support/safetext).
type ToolApproval struct {
	ServerID int64  `json:"server_id"`
	Server   string `json:"server"`
	// Tool is the upstream's own name; Exposed the name clients see.
	Tool    string `json:"tool"`
	Exposed string `json:"exposed"`
	// Present is false once the upstream stopped listing the tool; its
	// approval is kept, so an identical definition coming back is approved.
	Present        bool            `json:"present"`
	SeenSHA256     string          `json:"seen_sha256"`
	SeenDef        json.RawMessage `json:"seen_definition"`
	SeenAt         string          `json:"seen_at"`
	ApprovedSHA256 string          `json:"approved_sha256,omitempty"`
	ApprovedDef    json.RawMessage `json:"approved_definition,omitempty"`
	ApprovedAt     string          `json:"approved_at,omitempty"`
	ApprovedBy     string          `json:"approved_by,omitempty"`
	// PreviousSHA256 is, in what ApproveTools returns, the definition
	// approved before (empty for a new tool).
	PreviousSHA256 string `json:"-"`
}

// State is approved, new or changed.
func (a ToolApproval) State() string {
	switch {
	case a.ApprovedSHA256 == "":
		return DefinitionNew
	case a.ApprovedSHA256 == a.SeenSHA256:
		return DefinitionApproved
	}
	return DefinitionChanged
}

// SeenDefinition is one tool as the upstream listed it now.
type SeenDefinition struct {
	Tool, Exposed, SHA256 string
	Canonical             []byte
}

// DefinitionChange is a tool whose listed definition became one the user
// has not approved, at this RecordToolDefinitions (new, or changed from
// the approved one). A tool that stays unapproved is reported once.
type DefinitionChange struct {
	Tool, Exposed string
	State         string // new or changed
	Approved, Now string // SHA-256s ("" if never approved)
}

// RecordToolDefinitions records what server listed now (every other known
// tool of it is marked absent, or forgotten when it was never approved)
// and returns each listed tool's state, and
// the tools whose definition has just become unapproved. It writes only
// when something changed.
func (db *DB) RecordToolDefinitions(ctx context.Context, server string, defs []SeenDefinition, at time.Time) (map[string]string, []DefinitionChange, error) {
	srv, err := db.MCPServerByName(ctx, server)
	if err != nil {
		return nil, nil, err
	}
	known, err := db.toolApprovals(ctx, db.rdb, srv.ID)
	if err != nil {
		return nil, nil, err
	}
	byTool := make(map[string]ToolApproval, len(known))
	for _, k := range known {
		byTool[k.Tool] = k
	}
	states := make(map[string]string, len(defs))
	var changes []DefinitionChange
	write := false
	listed := make(map[string]bool, len(defs))
	for _, d := range defs {
		if len(d.SHA256) != 64 || !json.Valid(d.Canonical) || d.Tool == "" {
			return nil, nil, fmt.Errorf("tool %q: not a pinned definition", printable(d.Tool, 80))
		}
		listed[d.Tool] = true
		k, ok := byTool[d.Tool]
		if !ok || !k.Present || k.SeenSHA256 != d.SHA256 || k.Exposed != d.Exposed {
			write = true
		}
		k.Tool, k.SeenSHA256 = d.Tool, d.SHA256
		st := k.State()
		states[d.Tool] = st
		was := byTool[d.Tool]
		if st != DefinitionApproved && (!ok || !was.Present || was.SeenSHA256 != d.SHA256) {
			changes = append(changes, DefinitionChange{Tool: d.Tool, Exposed: d.Exposed, State: st, Approved: k.ApprovedSHA256, Now: d.SHA256})
		}
	}
	for _, k := range known {
		if k.Present && !listed[k.Tool] {
			write = true
		}
	}
	if !write {
		return states, nil, nil
	}
	stamp := formatTime(at)
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE cd_mcp_tool_approval SET present = 0 WHERE server_id = ?`, srv.ID); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO cd_mcp_tool_approval (server_id, tool, exposed, present, seen_sha256, seen_def, seen_at)
			VALUES (?, ?, ?, 1, ?, ?, ?)
			ON CONFLICT (server_id, tool) DO UPDATE SET exposed = excluded.exposed, present = 1,
				seen_at = CASE WHEN seen_sha256 = excluded.seen_sha256 THEN seen_at ELSE excluded.seen_at END,
				seen_sha256 = excluded.seen_sha256, seen_def = excluded.seen_def`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, d := range defs {
			if _, err := stmt.ExecContext(ctx, srv.ID, d.Tool, d.Exposed, d.SHA256, string(d.Canonical), stamp); err != nil {
				return fmt.Errorf("tool %q: %w", printable(d.Tool, 80), err)
			}
		}
		// A tool that is gone and was never approved leaves nothing to
		// keep. Kept, a server that lists new names at every listing
		// would grow the table (and the read of it above, at every
		// listing) without end.
		_, err = tx.ExecContext(ctx, `DELETE FROM cd_mcp_tool_approval WHERE server_id = ? AND present = 0 AND approved_sha256 IS NULL`, srv.ID)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return states, changes, nil
}

// ToolApprovals lists the pinned definitions of one server (serverID), or
// of every server (0), by server and tool name.
func (db *DB) ToolApprovals(ctx context.Context, serverID int64) ([]ToolApproval, error) {
	return db.toolApprovals(ctx, db.rdb, serverID)
}

func (db *DB) toolApprovals(ctx context.Context, q querier, serverID int64) ([]ToolApproval, error) {
	query := `SELECT a.server_id, s.name, a.tool, a.exposed, a.present, a.seen_sha256, a.seen_def, a.seen_at,
		COALESCE(a.approved_sha256, ''), COALESCE(a.approved_def, ''), COALESCE(a.approved_at, ''), COALESCE(a.approved_by, '')
		FROM cd_mcp_tool_approval a JOIN cd_mcp_server s ON s.id = a.server_id`
	var args []any
	if serverID != 0 {
		query += ` WHERE a.server_id = ?`
		args = append(args, serverID)
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY s.name, a.tool`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ToolApproval
	for rows.Next() {
		var a ToolApproval
		var seen, approved string
		if err := rows.Scan(&a.ServerID, &a.Server, &a.Tool, &a.Exposed, &a.Present, &a.SeenSHA256, &seen, &a.SeenAt,
			&a.ApprovedSHA256, &approved, &a.ApprovedAt, &a.ApprovedBy); err != nil {
			return nil, err
		}
		a.SeenDef = json.RawMessage(seen)
		if approved != "" {
			a.ApprovedDef = json.RawMessage(approved)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// ApproveRequest says what ApproveTools approves.
type ApproveRequest struct {
	Server string
	// Tool, if set, is one tool by its upstream or exposed name; empty
	// means every listed tool that is not approved.
	Tool string
	// SHA256, if set (only with Tool), must be the definition the daemon
	// last saw, so the user approves what they reviewed and not a newer
	// one that arrived since.
	SHA256 string
	// Reviewed, if set (without Tool and SHA256), approves exactly these
	// definitions, each by its upstream tool name and the hash the user
	// was shown, all in one transaction: if any of them changed since, none
	// is approved.
	Reviewed []ReviewedDefinition
	By       string // who approved (the audit entity, e.g. local:cli)
}

// ReviewedDefinition is a tool definition as it was shown to the user.
type ReviewedDefinition struct {
	Tool   string // the upstream name
	SHA256 string
}

// ApproveTools approves the definitions last seen of the tools req names
// and returns them (those that were approved already are not returned),
// all in one transaction: on an error nothing was approved.
// Errors name what to fix: an unknown server or tool, a hash that is not
// the one seen, or a server whose tools the daemon has not listed yet.
// When it approves any, each confirm runs with them before the commit (as
// RunConfirms: its error rolls the approvals back and is returned).
func (db *DB) ApproveTools(ctx context.Context, req ApproveRequest, at time.Time, confirm ...func([]ToolApproval) error) ([]ToolApproval, error) {
	if req.SHA256 != "" && req.Tool == "" {
		return nil, invalid("--sha256 approves one definition: name the tool too")
	}
	if len(req.Reviewed) > 0 && (req.Tool != "" || req.SHA256 != "") {
		return nil, invalid("approve either reviewed definitions or one tool, not both")
	}
	srv, err := db.MCPServerByName(ctx, req.Server)
	if err != nil {
		return nil, err
	}
	if srv.Builtin {
		return nil, invalid("%s is clawd's own tools: they need no approval", srv.Name)
	}
	var out []ToolApproval
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		out = nil
		all, err := db.toolApprovals(ctx, tx, srv.ID)
		if err != nil {
			return err
		}
		var pick []ToolApproval
		if len(req.Reviewed) > 0 {
			if len(all) == 0 {
				return notSeen(srv.Name)
			}
			if pick, err = reviewedPick(all, req.Reviewed, srv.Name); err != nil {
				return err
			}
		} else if pick, err = pickTools(all, req.Tool, srv.Name); err != nil {
			return err
		}
		if req.SHA256 != "" && pick[0].SeenSHA256 != req.SHA256 {
			return refused("the definition of %s is now %s, not %s: it changed since you looked; review it again with clawd mcp diff %s",
				printable(req.Tool, 80), pick[0].SeenSHA256, req.SHA256, srv.Name)
		}
		stamp := formatTime(at)
		for _, a := range pick {
			if a.State() == DefinitionApproved {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE cd_mcp_tool_approval SET approved_sha256 = seen_sha256, approved_def = seen_def,
				approved_at = ?, approved_by = ? WHERE server_id = ? AND tool = ? AND seen_sha256 = ?`,
				stamp, req.By, srv.ID, a.Tool, a.SeenSHA256); err != nil {
				return err
			}
			a.PreviousSHA256 = a.ApprovedSHA256
			a.ApprovedSHA256, a.ApprovedDef, a.ApprovedAt, a.ApprovedBy = a.SeenSHA256, a.SeenDef, stamp, req.By
			out = append(out, a)
		}
		if len(out) == 0 {
			return nil
		}
		return runConfirms(confirm, func(c func([]ToolApproval) error) error { return c(out) })
	})
	if err != nil {
		return nil, err // rolled back: nothing was approved
	}
	return out, nil
}

// PendingApprovals is what ApproveTools would approve for tool ("" for
// every listed tool) now: the definitions it picks that are not approved,
// with the same errors (an unknown server or tool, clawd's own tools, a
// server whose tools the daemon has not listed yet). `clawd mcp approve`
// shows them and then approves exactly those (ApproveRequest.Reviewed).
func (db *DB) PendingApprovals(ctx context.Context, server, tool string) ([]ToolApproval, error) {
	srv, err := db.MCPServerByName(ctx, server)
	if err != nil {
		return nil, err
	}
	if srv.Builtin {
		return nil, invalid("%s is clawd's own tools: they need no approval", srv.Name)
	}
	all, err := db.ToolApprovals(ctx, srv.ID)
	if err != nil {
		return nil, err
	}
	pick, err := pickTools(all, tool, srv.Name)
	if err != nil {
		return nil, err
	}
	var out []ToolApproval
	for _, a := range pick {
		if a.State() != DefinitionApproved {
			out = append(out, a)
		}
	}
	return out, nil
}

// pickTools is the tools an approval of tool names: every listed one when
// tool is empty, else the listed tool with that exposed name, else the tool
// by its upstream name (an upstream name may equal another tool's exposed
// name: the exposed one wins), else by the exposed name it was last listed
// under.
func pickTools(all []ToolApproval, tool, server string) ([]ToolApproval, error) {
	if len(all) == 0 {
		return nil, notSeen(server)
	}
	var pick []ToolApproval
	if tool == "" {
		for _, a := range all {
			if a.Present {
				pick = append(pick, a)
			}
		}
		return pick, nil
	}
	// The exposed name of a listed tool first: it is clawd's (unique among
	// the server's listed tools) and what clawd's own hints and listings
	// print, while the upstream chooses its names and could give a second
	// tool the exposed name of the first as its own, to be approved in its
	// place. Then the upstream's name; then the exposed name a tool had
	// when it was last listed.
	for _, a := range all {
		if a.Present && a.Exposed != "" && a.Exposed == tool {
			pick = append(pick, a)
		}
	}
	for _, a := range all {
		if len(pick) == 0 && a.Tool == tool {
			pick = append(pick, a)
		}
	}
	for _, a := range all {
		if len(pick) == 0 && a.Exposed != "" && a.Exposed == tool {
			pick = append(pick, a)
		}
	}
	if len(pick) == 0 {
		return nil, refused("%s has no tool %q; clawd mcp tools %s lists them", server, printable(tool, 80), server)
	}
	return pick, nil
}

func notSeen(server string) error {
	return refused("clawd has not seen the tools of %s yet: they are listed once clawd serve connects to it (see clawd mcp list), then approve them", server)
}

// reviewedPick finds each reviewed definition among all, by upstream name
// and the hash shown; a tool that is gone or whose definition changed since
// fails the whole approval.
func reviewedPick(all []ToolApproval, reviewed []ReviewedDefinition, server string) ([]ToolApproval, error) {
	var pick []ToolApproval
	for _, r := range reviewed {
		i := slices.IndexFunc(all, func(a ToolApproval) bool { return a.Tool == r.Tool })
		if i < 0 {
			return nil, refused("%s no longer has the tool %q you reviewed; nothing was approved: review again with clawd mcp diff %s",
				server, printable(r.Tool, 80), server)
		}
		if all[i].SeenSHA256 != r.SHA256 {
			return nil, refused("the definition of %s is now %s, not the %s you reviewed; nothing was approved: review again with clawd mcp diff %s",
				printable(r.Tool, 80), all[i].SeenSHA256, r.SHA256, server)
		}
		if !slices.ContainsFunc(pick, func(a ToolApproval) bool { return a.Tool == r.Tool }) {
			pick = append(pick, all[i]) // a tool named twice is approved once
		}
	}
	return pick, nil
}
