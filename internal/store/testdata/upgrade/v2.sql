-- A database written by clawd 1d80938 (schema version 2): clawd init, trust rows,
-- upstream servers, approvals, egress, credentials and tool calls, as that version could.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE cd_schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	) STRICT;
INSERT INTO cd_schema_migrations VALUES(1,'2026-12-04T17:57:37.428Z');
INSERT INTO cd_schema_migrations VALUES(2,'2026-12-04T17:57:37.429Z');
CREATE TABLE cd_trust_registry (
	entity_id   TEXT PRIMARY KEY NOT NULL,
	trust_level INTEGER NOT NULL CHECK (trust_level BETWEEN 0 AND 3),
	permissions TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(permissions) AND json_type(permissions) = 'object'),
	updated_at  TEXT NOT NULL
) STRICT;
INSERT INTO cd_trust_registry VALUES('cc:*',3,'{}','2026-12-04T17:57:37.428Z');
INSERT INTO cd_trust_registry VALUES('oc:*',3,'{}','2026-12-04T17:57:37.428Z');
INSERT INTO cd_trust_registry VALUES('local:*',2,'{}','2026-12-04T17:57:37.428Z');
INSERT INTO cd_trust_registry VALUES('cc:alice',2,'{}','2026-12-04T17:57:37.430Z');
INSERT INTO cd_trust_registry VALUES('local:bob',1,'{}','2026-12-04T17:57:37.441Z');
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
, client_claim TEXT, credential_id TEXT) STRICT;
INSERT INTO cd_policy_audit_log VALUES(1,'2026-12-04T17:57:39.028Z','local:ws-3c2f2640','read_file',2,'Allow','trust_level_default_allow',0,11,'handler','stdio','5',2256,'ok',NULL,0,'claude-code',NULL);
INSERT INTO cd_policy_audit_log VALUES(2,'2026-12-04T17:57:39.028Z','local:ws-3c2f2640','list_dir',2,'Allow','trust_level_default_allow',0,3,'handler','stdio','3',2256,'ok',NULL,0,'claude-code',NULL);
INSERT INTO cd_policy_audit_log VALUES(3,'2026-12-04T17:57:39.028Z','local:ws-3c2f2640','bash',2,'Allow','trust_level_default_allow',0,1,'handler','stdio','4',2256,'ok',NULL,1,'claude-code',NULL);
INSERT INTO cd_policy_audit_log VALUES(4,'2026-12-04T17:57:40.568Z','local:ws-3c2f2640','read_file',2,'Allow','trust_level_default_allow',0,14,'handler','stdio','5',2370,'ok',NULL,0,'claude-code',NULL);
INSERT INTO cd_policy_audit_log VALUES(5,'2026-12-04T17:57:40.568Z','local:ws-3c2f2640','list_dir',2,'Allow','trust_level_default_allow',0,3,'handler','stdio','3',2370,'ok',NULL,0,'claude-code',NULL);
INSERT INTO cd_policy_audit_log VALUES(6,'2026-12-04T17:57:40.568Z','local:ws-3c2f2640','bash',2,'Allow','trust_level_default_allow',0,2,'handler','stdio','4',2370,'ok',NULL,3,'claude-code',NULL);
INSERT INTO cd_policy_audit_log VALUES(7,'2026-12-04T17:57:42.094Z','local:ws-3c2f2640','read_file',2,'Allow','trust_level_default_allow',0,15,'handler','stdio','5',2453,'ok',NULL,0,'claude-code',NULL);
INSERT INTO cd_policy_audit_log VALUES(8,'2026-12-04T17:57:42.095Z','local:ws-3c2f2640','list_dir',2,'Allow','trust_level_default_allow',0,4,'handler','stdio','3',2453,'ok',NULL,0,'claude-code',NULL);
INSERT INTO cd_policy_audit_log VALUES(9,'2026-12-04T17:57:42.095Z','local:ws-3c2f2640','bash',2,'Allow','trust_level_default_allow',0,3,'handler','stdio','4',2453,'ok',NULL,2,'claude-code',NULL);
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
INSERT INTO cd_client_credential VALUES('9218816f7eeb37ba','ws-3c2f2640','cc','laptop','02bb9774a7708b59390a62a6b036ed6dbda8a2a9f5978011ac2d683bf357d696','2026-12-04T17:57:37.493Z',NULL);
INSERT INTO cd_client_credential VALUES('0a0df60271033eaa','ws-3c2f2640','oc','','e8532942389eaf28723a09863d4e4b107f99c46cb03b03a0ddd4cba540eac691','2026-12-04T17:57:37.505Z',NULL);
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
COMMIT;
