package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/clawde/clawd/internal/support/safetext"
)

// MCPTool is one entry of an upstream's tools cache: the tool as the
// upstream's last tools/list described it, and when that was. The name is
// the one clawd exposes (SERVER__tool, possibly hash-shortened), which is
// what bindings and `clawd mcp tools` name.
type MCPTool struct {
	ServerID    int64           `json:"server_id"`
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	LastSeenAt  string          `json:"last_seen_at"`
}

// maxCachedTools bounds one server's cache; the connection layer caps what
// it accepts from an upstream well below this.
const maxCachedTools = 10000

// ReplaceServerTools makes the cache of a server exactly tools (seen at
// seenAt) and sets its tool_count, in one transaction. ServerID, Server
// and LastSeenAt of the entries are ignored. A name twice, an empty name or
// an input schema that is not a JSON object (nil means {}) is an error
// naming the tool: the cache is left as it was.
func (db *DB) ReplaceServerTools(ctx context.Context, serverID int64, tools []MCPTool, seenAt time.Time) error {
	if err := checkTools(tools); err != nil {
		return err
	}
	return db.writeTx(ctx, func(tx *sql.Tx) error {
		var builtin bool
		if err := tx.QueryRowContext(ctx, `SELECT builtin FROM cd_mcp_server WHERE id = ?`, serverID).Scan(&builtin); err != nil {
			if err == sql.ErrNoRows {
				return fmt.Errorf("%w: %d", ErrServerNotFound, serverID)
			}
			return err
		}
		if builtin {
			return ErrBuiltinServer
		}
		return replaceToolsTx(ctx, tx, serverID, tools, seenAt)
	})
}

// checkTools is ReplaceServerTools' validation, done before any write.
func checkTools(tools []MCPTool) error {
	if len(tools) > maxCachedTools {
		return invalid("%d tools: the cache holds at most %d per server", len(tools), maxCachedTools)
	}
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if t.Name == "" || len(t.Name) > 1024 {
			return invalid("tool %d: the name must be 1-1024 bytes", i+1)
		}
		if seen[t.Name] {
			return invalid("tool %q is listed twice", printable(t.Name, 80))
		}
		seen[t.Name] = true
		if len(t.InputSchema) > 0 {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(t.InputSchema, &obj); err != nil || obj == nil {
				return invalid("tool %q: inputSchema is not a JSON object", printable(t.Name, 80))
			}
		}
	}
	return nil
}

// replaceToolsTx replaces the cache of a non-built-in server with tools,
// already checked, and sets its tool_count, inside tx.
func replaceToolsTx(ctx context.Context, tx *sql.Tx, serverID int64, tools []MCPTool, seenAt time.Time) error {
	at := formatTime(seenAt)
	if _, err := tx.ExecContext(ctx, `DELETE FROM cd_mcp_server_tool WHERE server_id = ?`, serverID); err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO cd_mcp_server_tool (server_id, name, description, input_schema, last_seen_at) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, t := range tools {
		schema := "{}"
		if len(t.InputSchema) > 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, t.InputSchema); err != nil {
				return err
			}
			schema = b.String()
		}
		if _, err := stmt.ExecContext(ctx, serverID, safetext.ValidUTF8(t.Name), safetext.ValidUTF8(t.Description), schema, at); err != nil {
			return fmt.Errorf("tool %q: %w", printable(t.Name, 80), err)
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE cd_mcp_server SET tool_count = ? WHERE id = ?`, len(tools), serverID)
	return err
}

// MCPTools lists the cached tools of one server, or of every server when
// serverID is 0, by server name and tool name.
func (db *DB) MCPTools(ctx context.Context, serverID int64) ([]MCPTool, error) {
	q := `SELECT t.server_id, s.name, t.name, t.description, t.input_schema, t.last_seen_at
		FROM cd_mcp_server_tool t JOIN cd_mcp_server s ON s.id = t.server_id`
	var args []any
	if serverID != 0 {
		q += ` WHERE t.server_id = ?`
		args = append(args, serverID)
	}
	rows, err := db.rdb.QueryContext(ctx, q+` ORDER BY s.name, t.name`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []MCPTool
	for rows.Next() {
		var t MCPTool
		var schema string
		if err := rows.Scan(&t.ServerID, &t.Server, &t.Name, &t.Description, &schema, &t.LastSeenAt); err != nil {
			return nil, err
		}
		t.InputSchema = json.RawMessage(schema)
		out = append(out, t)
	}
	return out, rows.Err()
}
