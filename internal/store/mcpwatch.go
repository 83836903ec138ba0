package store

import (
	"context"
	"database/sql"
	"time"
)

// MCPServersGeneration is a counter that triggers raise on every change
// to an MCP server's configuration (insert, delete, any update of a config
// column or enabled), by any process; status writes and the tools cache do
// not raise it. A daemon polls it (one indexed one-row read on a prepared
// statement) and re-reads MCPServers when it moved, as the trust registry
// is reloaded on its own counter (DB.Generation).
func (db *DB) MCPServersGeneration(ctx context.Context) (int64, error) {
	var n int64
	err := db.mcpGenSQL.QueryRowContext(ctx).Scan(&n)
	return n, err
}

// MCPServersSnapshot reads the generation and every row in one read
// transaction, so the rows are exactly those of that generation.
func (db *DB) MCPServersSnapshot(ctx context.Context) (gen int64, list []MCPServer, err error) {
	tx, err := db.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT n FROM cd_mcp_server_generation WHERE id = 1`).Scan(&gen); err != nil {
		return 0, nil, err
	}
	if list, err = listServers(ctx, tx); err != nil {
		return 0, nil, err
	}
	return gen, list, nil
}

// WatchMCPServers calls onChange with every row now, and again each time
// a poll (every `every`, at least 10 ms) finds MCPServersGeneration moved:
// after `clawd mcp add`, rm, enable or disable by any process, within
// about one period. It returns when ctx ends (nil) or a read fails (the
// error). onChange runs on the caller's goroutine, one call at a time; it
// gets the whole list and decides itself what changed (a server's ID is
// stable across renames and edits). A poll costs one indexed one-row read.
func (db *DB) WatchMCPServers(ctx context.Context, every time.Duration, onChange func([]MCPServer)) error {
	if every < 10*time.Millisecond {
		every = 10 * time.Millisecond
	}
	gen, list, err := db.MCPServersSnapshot(ctx)
	if err != nil {
		return err
	}
	onChange(list)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		n, err := db.MCPServersGeneration(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if n == gen {
			continue
		}
		if gen, list, err = db.MCPServersSnapshot(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		onChange(list)
	}
}
