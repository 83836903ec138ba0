package store

import (
	"context"
	"database/sql"
	"errors"
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
	// Version 4: upstream MCP servers (`clawd mcp add`), their tools cache,
	// and a change counter of their own: a daemon polls it to apply a
	// config change without restart, and status writes (which the daemon
	// makes itself) do not raise it, nor the trust registry's counter.
	// clawd's own tools are the built-in row, which triggers keep from
	// being deleted or edited. docs/upstreams.md describes each column.
	`
CREATE TABLE cd_mcp_server (
	id                  INTEGER PRIMARY KEY,
	name                TEXT NOT NULL COLLATE NOCASE UNIQUE CHECK (
		length(name) BETWEEN 1 AND 128 AND name NOT GLOB '*[^A-Za-z0-9_-]*'
		AND substr(name, 1, 1) GLOB '[A-Za-z0-9]' AND name NOT GLOB '*_' AND instr(name, '__') = 0),
	description         TEXT NOT NULL DEFAULT '' CHECK (length(description) <= 1024),
	transport           TEXT NOT NULL CHECK (transport IN ('builtin', 'stdio', 'http', 'sse')),
	command             TEXT CHECK (length(command) BETWEEN 1 AND 4096),
	args                TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(args) AND json_type(args) = 'array'),
	cwd                 TEXT CHECK (length(cwd) BETWEEN 1 AND 4096),
	env                 TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(env) AND json_type(env) = 'object'),
	url                 TEXT CHECK (length(url) <= 2048 AND (url GLOB 'http://?*' OR url GLOB 'https://?*')),
	headers             TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(headers) AND json_type(headers) = 'object'),
	connect_timeout_s   INTEGER NOT NULL DEFAULT 30 CHECK (connect_timeout_s BETWEEN 5 AND 300),
	read_timeout_s      INTEGER NOT NULL DEFAULT 60 CHECK (read_timeout_s BETWEEN 5 AND 300),
	enabled             INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
	builtin             INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
	created_at          TEXT NOT NULL,
	updated_at          TEXT NOT NULL,
	last_status         TEXT NOT NULL DEFAULT 'disconnected' CHECK (last_status IN ('disconnected', 'connecting', 'connected', 'stale', 'unavailable', 'error', 'disabled')),
	last_error          TEXT CHECK (length(last_error) <= 4096),
	last_connected_at   TEXT,
	tool_count          INTEGER NOT NULL DEFAULT 0 CHECK (tool_count >= 0),
	CHECK ((builtin = 1) = (transport = 'builtin')),
	CHECK (transport <> 'builtin' OR (command IS NULL AND url IS NULL AND cwd IS NULL AND args = '[]' AND env = '{}' AND headers = '{}')),
	CHECK (transport <> 'stdio' OR (command IS NOT NULL AND url IS NULL AND headers = '{}')),
	CHECK (transport NOT IN ('http', 'sse') OR (url IS NOT NULL AND command IS NULL AND cwd IS NULL AND args = '[]' AND env = '{}'))
) STRICT;

CREATE UNIQUE INDEX cd_mcp_server_one_builtin ON cd_mcp_server (builtin) WHERE builtin = 1;

CREATE TABLE cd_mcp_server_tool (
	server_id    INTEGER NOT NULL REFERENCES cd_mcp_server (id) ON DELETE CASCADE,
	name         TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 1024),
	description  TEXT NOT NULL DEFAULT '',
	input_schema TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(input_schema) AND json_type(input_schema) = 'object'),
	last_seen_at TEXT NOT NULL,
	PRIMARY KEY (server_id, name)
) STRICT;

CREATE TABLE cd_mcp_server_generation (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
) STRICT;
INSERT INTO cd_mcp_server_generation (id, n) VALUES (1, 0);

CREATE TRIGGER cd_mcp_server_ai AFTER INSERT ON cd_mcp_server BEGIN UPDATE cd_mcp_server_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_ad AFTER DELETE ON cd_mcp_server BEGIN UPDATE cd_mcp_server_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_au AFTER UPDATE OF name, description, transport, command, args, cwd, env, url, headers,
	connect_timeout_s, read_timeout_s, enabled, builtin ON cd_mcp_server
	BEGIN UPDATE cd_mcp_server_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_builtin_bd BEFORE DELETE ON cd_mcp_server WHEN old.builtin = 1
	BEGIN SELECT RAISE(ABORT, 'the built-in server cannot be deleted'); END;
CREATE TRIGGER cd_mcp_server_builtin_bu BEFORE UPDATE OF name, description, transport, command, args, cwd, env, url, headers,
	connect_timeout_s, read_timeout_s, enabled, builtin ON cd_mcp_server WHEN old.builtin = 1 OR new.builtin = 1
	BEGIN SELECT RAISE(ABORT, 'the built-in server cannot be changed'); END;

INSERT INTO cd_mcp_server (name, description, transport, builtin, enabled, last_status, tool_count, created_at, updated_at)
VALUES ('clawd', 'clawd''s own tools: bash, read_file, write_file, list_dir, search', 'builtin', 1, 1, 'connected', 5,
	strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
`,
	// Version 5 (tool-definition approval): per upstream tool, the
	// definition the daemon last saw and the one the user approved
	// (canonical JSON and SHA-256), so a new or changed tool stays hidden
	// until `clawd mcp approve` and `clawd mcp diff` can show what
	// changed. An approval raises the servers' change counter, so a
	// running daemon offers the tool within its poll; the daemon's own
	// "seen" writes do not. Rows go with their server.
	`
CREATE TABLE cd_mcp_tool_approval (
	server_id       INTEGER NOT NULL REFERENCES cd_mcp_server (id) ON DELETE CASCADE,
	tool            TEXT NOT NULL CHECK (length(tool) BETWEEN 1 AND 1024),
	exposed         TEXT NOT NULL DEFAULT '',
	present         INTEGER NOT NULL DEFAULT 1 CHECK (present IN (0, 1)),
	seen_sha256     TEXT NOT NULL CHECK (length(seen_sha256) = 64),
	seen_def        TEXT NOT NULL CHECK (json_valid(seen_def)),
	seen_at         TEXT NOT NULL,
	approved_sha256 TEXT CHECK (approved_sha256 IS NULL OR length(approved_sha256) = 64),
	approved_def    TEXT CHECK (approved_def IS NULL OR json_valid(approved_def)),
	approved_at     TEXT,
	approved_by     TEXT,
	CHECK ((approved_sha256 IS NULL) = (approved_def IS NULL)),
	PRIMARY KEY (server_id, tool)
) STRICT;

CREATE TRIGGER cd_mcp_tool_approval_ai AFTER INSERT ON cd_mcp_tool_approval WHEN new.approved_sha256 IS NOT NULL
	BEGIN UPDATE cd_mcp_server_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_tool_approval_au AFTER UPDATE OF approved_sha256 ON cd_mcp_tool_approval
	WHEN old.approved_sha256 IS NOT new.approved_sha256
	BEGIN UPDATE cd_mcp_server_generation SET n = n + 1 WHERE id = 1; END;
`,
	// Version 6: identity forwarding per upstream server (docs/upstreams.md, "Identity
	// forwarding"): off by default; meta or signed. NULL argument and
	// audience mean the mode's default argument and the server's name. A
	// change raises the servers' counter, so a daemon applies it live.
	`
ALTER TABLE cd_mcp_server ADD COLUMN identity_mode TEXT NOT NULL DEFAULT 'off' CHECK (identity_mode IN ('off', 'meta', 'signed'));
ALTER TABLE cd_mcp_server ADD COLUMN identity_arg TEXT CHECK (length(identity_arg) BETWEEN 1 AND 64 AND identity_arg NOT GLOB '*[^A-Za-z0-9_]*');
ALTER TABLE cd_mcp_server ADD COLUMN identity_audience TEXT CHECK (length(identity_audience) BETWEEN 1 AND 256);
CREATE TRIGGER cd_mcp_server_identity_au AFTER UPDATE OF identity_mode, identity_arg, identity_audience ON cd_mcp_server
	BEGIN UPDATE cd_mcp_server_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_identity_builtin_bu BEFORE UPDATE OF identity_mode, identity_arg, identity_audience ON cd_mcp_server
	WHEN old.builtin = 1 BEGIN SELECT RAISE(ABORT, 'the built-in server cannot be changed'); END;
`,
	// Version 7: the egress allowlist holds origins (scheme, host, port),
	// what a remote upstream must match to be connected at all, with a
	// private flag that lets it reach private and link-local addresses
	// (docs/upstreams.md, "Egress"). The version-1 table (host, port) was
	// never read or written by any clawd, so it is rebuilt empty rather
	// than guessed into origins (dropping a table drops its triggers). The
	// audit log records the upstream server of a proxied call, so `clawd
	// audit --server` finds it under any exposed name; built-in calls
	// leave it NULL.
	`
DROP TABLE IF EXISTS cd_egress_allowlist;
CREATE TABLE cd_egress_allowlist (
	scheme   TEXT NOT NULL CHECK (scheme IN ('http', 'https')),
	host     TEXT NOT NULL CHECK (length(host) BETWEEN 1 AND 253 AND host NOT GLOB '*[^a-z0-9._:-]*' AND host NOT GLOB '*.'),
	port     INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
	private  INTEGER NOT NULL DEFAULT 0 CHECK (private IN (0, 1)),
	added_at TEXT NOT NULL,
	PRIMARY KEY (scheme, host, port)
) STRICT;
CREATE TRIGGER cd_egress_allowlist_ai AFTER INSERT ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_au AFTER UPDATE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_ad AFTER DELETE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;

ALTER TABLE cd_policy_audit_log ADD COLUMN server TEXT;
`,
	// Version 8: what an approved stdio upstream runs beyond its
	// executable (whose hash stays in cd_mcp_server_allowlist): the SHA-256
	// of the script an interpreter runs (kind 'script', subject '') and
	// the version and lockfile integrity of the package npx runs (kind
	// 'package', subject NAME@VERSION). detail is for people (the script's
	// path, the lockfile read). Changes raise the trust registry's counter
	// like the allowlist's, so a daemon's next check sees them.
	// docs/upstreams.md ("Approval: what is pinned").
	`
CREATE TABLE cd_mcp_server_pin (
	server_id TEXT NOT NULL CHECK (length(server_id) BETWEEN 1 AND 128),
	kind      TEXT NOT NULL CHECK (kind IN ('script', 'package')),
	subject   TEXT NOT NULL CHECK (length(subject) <= 256),
	digest    TEXT NOT NULL CHECK (length(digest) BETWEEN 1 AND 256),
	detail    TEXT NOT NULL DEFAULT '' CHECK (length(detail) <= 4096),
	added_at  TEXT NOT NULL,
	CHECK (kind <> 'script' OR (subject = '' AND length(digest) = 64 AND digest NOT GLOB '*[^0-9a-f]*')),
	CHECK (kind <> 'package' OR (length(subject) >= 3 AND instr(substr(subject, 2), '@') > 0)),
	PRIMARY KEY (server_id, kind, subject, digest)
) STRICT;
CREATE TRIGGER cd_mcp_server_pin_ai AFTER INSERT ON cd_mcp_server_pin BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_pin_au AFTER UPDATE ON cd_mcp_server_pin BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_pin_ad AFTER DELETE ON cd_mcp_server_pin BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
`,
	// Version 9: how far each decision journal (a process's append-only
	// file of audit rows not yet in cd_policy_audit_log) is folded into
	// the table. The row and the rows it folded commit together, so no
	// journal line is inserted twice (internal/store/journal.go).
	`
CREATE TABLE cd_audit_journal (
	name   TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 128),
	folded INTEGER NOT NULL CHECK (folded >= 0)
) STRICT;
`,
	// Version 10: no index on the audit log's timestamp. Version 3 once
	// created one (clawd builds of that time); it was taken out of version
	// 3 because every audited call paid for the second B-tree, so databases
	// those builds wrote still have it and a new one does not. Dropping it
	// makes both the same.
	`
DROP INDEX IF EXISTS cd_policy_audit_log_timestamp;
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

// ErrNewerSchema is the error (errors.Is) of Open for a database a newer
// clawd migrated: it is not opened for writing nor changed.
var ErrNewerSchema = errors.New("the database was written by a newer clawd")

func newerSchema(v int) error {
	return fmt.Errorf("%w: schema version %d, this clawd understands up to %d; it is left as it is: upgrade clawd to that version or later", ErrNewerSchema, v, SchemaVersion)
}
