-- A database written by clawd 63b07c8 (schema version 5): clawd init, trust rows,
-- upstream servers, approvals, egress, credentials and tool calls, as that version could.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE cd_schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	) STRICT;
INSERT INTO cd_schema_migrations VALUES(1,'2026-12-04T17:57:56.857Z');
INSERT INTO cd_schema_migrations VALUES(2,'2026-12-04T17:57:56.858Z');
INSERT INTO cd_schema_migrations VALUES(3,'2026-12-04T17:57:56.858Z');
INSERT INTO cd_schema_migrations VALUES(4,'2026-12-04T17:57:56.859Z');
INSERT INTO cd_schema_migrations VALUES(5,'2026-12-04T17:57:56.859Z');
CREATE TABLE cd_trust_registry (
	entity_id   TEXT PRIMARY KEY NOT NULL,
	trust_level INTEGER NOT NULL CHECK (trust_level BETWEEN 0 AND 3),
	permissions TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(permissions) AND json_type(permissions) = 'object'),
	updated_at  TEXT NOT NULL
) STRICT;
INSERT INTO cd_trust_registry VALUES('cc:*',3,'{}','2026-12-04T17:57:56.857Z');
INSERT INTO cd_trust_registry VALUES('oc:*',3,'{}','2026-12-04T17:57:56.857Z');
INSERT INTO cd_trust_registry VALUES('local:*',2,'{}','2026-12-04T17:57:56.857Z');
INSERT INTO cd_trust_registry VALUES('cc:alice',2,'{}','2026-12-04T17:57:56.861Z');
INSERT INTO cd_trust_registry VALUES('local:bob',1,'{}','2026-12-04T17:57:56.872Z');
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
, client_claim TEXT, credential_id TEXT, args_sha256 TEXT, args_summary TEXT) STRICT;
INSERT INTO cd_policy_audit_log VALUES(1,'2026-12-04T17:57:58.490Z','local:ws-4a79a4ed','read_file',2,'Allow','trust_level_default_allow',0,14,'handler','stdio','5',3015,'ok',NULL,0,'claude-code',NULL,'0c4ec1c861cfe3f43d6259fca4861beee0936d7556ba508576b707ff134f173e','path: f.txt');
INSERT INTO cd_policy_audit_log VALUES(2,'2026-12-04T17:57:58.491Z','local:ws-4a79a4ed','list_dir',2,'Allow','trust_level_default_allow',0,4,'handler','stdio','3',3015,'ok',NULL,0,'claude-code',NULL,'4ae486c3a48f8dc732af672b138b438a1d96960304cc334d46bbc2687d169cbb','path: .');
INSERT INTO cd_policy_audit_log VALUES(3,'2026-12-04T17:57:58.491Z','local:ws-4a79a4ed','bash',2,'Allow','trust_level_default_allow',0,3,'handler','stdio','4',3015,'ok',NULL,2,'claude-code',NULL,'1eab1ef18bb109ae99f48bfe7efaba9dde08e27bdb46438214bd6c65eb3ff2ff','command: echo hi');
INSERT INTO cd_policy_audit_log VALUES(4,'2026-12-04T17:58:00.052Z','local:ws-4a79a4ed','read_file',2,'Allow','trust_level_default_allow',0,16,'handler','stdio','5',3187,'ok',NULL,0,'claude-code',NULL,'0c4ec1c861cfe3f43d6259fca4861beee0936d7556ba508576b707ff134f173e','path: f.txt');
INSERT INTO cd_policy_audit_log VALUES(5,'2026-12-04T17:58:00.052Z','local:ws-4a79a4ed','list_dir',2,'Allow','trust_level_default_allow',0,4,'handler','stdio','3',3187,'ok',NULL,0,'claude-code',NULL,'4ae486c3a48f8dc732af672b138b438a1d96960304cc334d46bbc2687d169cbb','path: .');
INSERT INTO cd_policy_audit_log VALUES(6,'2026-12-04T17:58:00.052Z','local:ws-4a79a4ed','bash',2,'Allow','trust_level_default_allow',0,2,'handler','stdio','4',3187,'ok',NULL,2,'claude-code',NULL,'1eab1ef18bb109ae99f48bfe7efaba9dde08e27bdb46438214bd6c65eb3ff2ff','command: echo hi');
INSERT INTO cd_policy_audit_log VALUES(7,'2026-12-04T17:58:01.592Z','local:ws-4a79a4ed','read_file',2,'Allow','trust_level_default_allow',0,14,'handler','stdio','5',3298,'ok',NULL,0,'claude-code',NULL,'0c4ec1c861cfe3f43d6259fca4861beee0936d7556ba508576b707ff134f173e','path: f.txt');
INSERT INTO cd_policy_audit_log VALUES(8,'2026-12-04T17:58:01.592Z','local:ws-4a79a4ed','list_dir',2,'Allow','trust_level_default_allow',0,4,'handler','stdio','3',3298,'ok',NULL,0,'claude-code',NULL,'4ae486c3a48f8dc732af672b138b438a1d96960304cc334d46bbc2687d169cbb','path: .');
INSERT INTO cd_policy_audit_log VALUES(9,'2026-12-04T17:58:01.592Z','local:ws-4a79a4ed','bash',2,'Allow','trust_level_default_allow',0,2,'handler','stdio','4',3298,'ok',NULL,4,'claude-code',NULL,'1eab1ef18bb109ae99f48bfe7efaba9dde08e27bdb46438214bd6c65eb3ff2ff','command: echo hi');
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
INSERT INTO cd_generation VALUES(1,7);
CREATE TABLE cd_client_credential (
	id            TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 16 AND id NOT GLOB '*[^0-9a-f]*'),
	workspace_id  TEXT NOT NULL,
	kind          TEXT NOT NULL,
	label         TEXT NOT NULL DEFAULT '',
	secret_sha256 TEXT NOT NULL CHECK (length(secret_sha256) = 64 AND secret_sha256 NOT GLOB '*[^0-9a-f]*'),
	created_at    TEXT NOT NULL,
	revoked_at    TEXT
) STRICT;
INSERT INTO cd_client_credential VALUES('e787e9e9bac5edae','ws-4a79a4ed','cc','laptop','dd97ddf3ca8bdafa43c54e5681e10f00a15c16a76ed14dd7658472a1e0f2c972','2026-12-04T17:57:56.926Z',NULL);
INSERT INTO cd_client_credential VALUES('e7d201517ff64c10','ws-4a79a4ed','oc','','a14893d938308ba68cca95f6fb07291c5848f3d31ce5cce6d1df96cfce4792ec','2026-12-04T17:57:56.942Z',NULL);
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
INSERT INTO cd_mcp_server VALUES(1,'clawd','clawd''s own tools: bash, read_file, write_file, list_dir, search','builtin',NULL,'[]',NULL,'{}',NULL,'{}',30,60,1,1,'2026-12-04T17:57:56.859Z','2026-12-04T17:57:56.859Z','connected',NULL,NULL,5);
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
INSERT INTO cd_mcp_server_generation VALUES(1,1);
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
CREATE TRIGGER cd_trust_registry_ai AFTER INSERT ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_trust_registry_au AFTER UPDATE ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_trust_registry_ad AFTER DELETE ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_ai AFTER INSERT ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_au AFTER UPDATE ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_ad AFTER DELETE ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_ai AFTER INSERT ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_au AFTER UPDATE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_ad AFTER DELETE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_client_credential_ai AFTER INSERT ON cd_client_credential BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_client_credential_au AFTER UPDATE ON cd_client_credential BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_client_credential_ad AFTER DELETE ON cd_client_credential BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE UNIQUE INDEX cd_mcp_server_one_builtin ON cd_mcp_server (builtin) WHERE builtin = 1;
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
CREATE TRIGGER cd_mcp_tool_approval_ai AFTER INSERT ON cd_mcp_tool_approval WHEN new.approved_sha256 IS NOT NULL
	BEGIN UPDATE cd_mcp_server_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_tool_approval_au AFTER UPDATE OF approved_sha256 ON cd_mcp_tool_approval
	WHEN old.approved_sha256 IS NOT new.approved_sha256
	BEGIN UPDATE cd_mcp_server_generation SET n = n + 1 WHERE id = 1; END;
COMMIT;
