package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migrations are applied in order; migrations[i] brings the schema from
// version i to i+1. Never edit an applied migration: add one.
var migrations = []string{
	// Version 1: the trust registry, audit log and two allowlists, the
	// change counter, and the first-start trust rows.
	`
CREATE TABLE cd_trust_registry (
	entity_id   TEXT PRIMARY KEY NOT NULL,
	trust_level INTEGER NOT NULL CHECK (trust_level BETWEEN 0 AND 3),
	permissions TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(permissions) AND json_type(permissions) = 'object'),
	updated_at  TEXT NOT NULL
) STRICT;

CREATE TABLE cd_policy_audit_log (
	id             INTEGER PRIMARY KEY,
	timestamp      TEXT NOT NULL,
	entity_id      TEXT NOT NULL,
	tool_id        TEXT NOT NULL,
	trust_level    INTEGER,
	result         TEXT NOT NULL CHECK (result IN ('Allow', 'Deny')),
	reason         TEXT NOT NULL,
	latency_ms     INTEGER NOT NULL,
	latency_us     INTEGER NOT NULL,
	step           TEXT NOT NULL,
	transport      TEXT NOT NULL,
	request_id     TEXT NOT NULL,
	pid            INTEGER NOT NULL,
	outcome        TEXT,
	outcome_detail TEXT,
	duration_ms    INTEGER
) STRICT;

CREATE TABLE cd_mcp_server_allowlist (
	server_id TEXT NOT NULL,
	sha256    TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
	added_at  TEXT NOT NULL,
	PRIMARY KEY (server_id, sha256)
) STRICT;

CREATE TABLE cd_egress_allowlist (
	host     TEXT NOT NULL,
	port     INTEGER NOT NULL DEFAULT 0 CHECK (port BETWEEN 0 AND 65535),
	added_at TEXT NOT NULL,
	PRIMARY KEY (host, port)
) STRICT;

CREATE TABLE cd_generation (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
) STRICT;
INSERT INTO cd_generation (id, n) VALUES (1, 0);

CREATE TRIGGER cd_trust_registry_ai AFTER INSERT ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_trust_registry_au AFTER UPDATE ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_trust_registry_ad AFTER DELETE ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_ai AFTER INSERT ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_au AFTER UPDATE ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_ad AFTER DELETE ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_ai AFTER INSERT ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_au AFTER UPDATE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_ad AFTER DELETE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;

INSERT INTO cd_trust_registry (entity_id, trust_level, permissions, updated_at) VALUES
	('cc:*', 3, '{}', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
	('oc:*', 3, '{}', strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
	('local:*', 2, '{}', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
`,
	// Version 2: per-client credentials (`clawd token issue`), and the
	// audit log records what the client said it was and which credential
	// it presented.
	`
CREATE TABLE cd_client_credential (
	id            TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 16 AND id NOT GLOB '*[^0-9a-f]*'),
	workspace_id  TEXT NOT NULL,
	kind          TEXT NOT NULL,
	label         TEXT NOT NULL DEFAULT '',
	secret_sha256 TEXT NOT NULL CHECK (length(secret_sha256) = 64 AND secret_sha256 NOT GLOB '*[^0-9a-f]*'),
	created_at    TEXT NOT NULL,
	revoked_at    TEXT
) STRICT;
CREATE TRIGGER cd_client_credential_ai AFTER INSERT ON cd_client_credential BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_client_credential_au AFTER UPDATE ON cd_client_credential BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_client_credential_ad AFTER DELETE ON cd_client_credential BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;

ALTER TABLE cd_policy_audit_log ADD COLUMN client_claim TEXT;
ALTER TABLE cd_policy_audit_log ADD COLUMN credential_id TEXT;
`,
	// Version 3: what a call's arguments were, without storing them: their
	// SHA-256 and a short secret-masked summary (path, command's first
	// line). No index on timestamp: every call inserts a row before it runs,
	// and a second B-tree to update made the audited call ~20% slower, for
	// the benefit of `clawd audit --since` and `prune`, which may scan.
	`
ALTER TABLE cd_policy_audit_log ADD COLUMN args_sha256 TEXT;
ALTER TABLE cd_policy_audit_log ADD COLUMN args_summary TEXT;
`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

// migrate brings the database to SchemaVersion. The version table
// (cd_schema_migrations) records each applied version. The common case, an
// up-to-date database, costs one read and no write lock; otherwise the
// migrations run in one BEGIN IMMEDIATE transaction, so two processes
// starting at once apply them once.
func migrate(ctx context.Context, wdb *sql.DB) error {
	v, err := schemaVersion(ctx, wdb)
	if err == nil && v == SchemaVersion {
		return nil
	}
	if err == nil && v > SchemaVersion {
		return newerSchema(v)
	}
	tx, err := wdb.BeginTx(ctx, nil) // BEGIN IMMEDIATE (DSN _txlock)
	if err != nil {
		return fmt.Errorf("schema migration: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS cd_schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("schema migration: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM cd_schema_migrations`).Scan(&v); err != nil {
		return fmt.Errorf("schema migration: %w", err)
	}
	if v > SchemaVersion {
		return newerSchema(v)
	}
	for ; v < SchemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("schema migration to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO cd_schema_migrations (version, applied_at) VALUES (?, ?)`, v+1, now()); err != nil {
			return fmt.Errorf("schema migration to version %d: %w", v+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("schema migration: %w", err)
	}
	return nil
}

// schemaVersion reads the applied version without taking the write lock.
func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM cd_schema_migrations`).Scan(&v)
	if err != nil && strings.Contains(err.Error(), "no such table") {
		return 0, nil
	}
	return v, err
}

func newerSchema(v int) error {
	return fmt.Errorf("the database has schema version %d, newer than this clawd understands (%d); upgrade clawd", v, SchemaVersion)
}
