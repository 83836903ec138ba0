-- A database written by clawd a7436d7 (schema version 1): clawd init, trust rows,
-- upstream servers, approvals, egress, credentials and tool calls, as that version could.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE cd_schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	) STRICT;
INSERT INTO cd_schema_migrations VALUES(1,'2026-12-04T17:57:27.749Z');
CREATE TABLE cd_trust_registry (
	entity_id   TEXT PRIMARY KEY NOT NULL,
	trust_level INTEGER NOT NULL CHECK (trust_level BETWEEN 0 AND 3),
	permissions TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(permissions) AND json_type(permissions) = 'object'),
	updated_at  TEXT NOT NULL
) STRICT;
INSERT INTO cd_trust_registry VALUES('cc:*',3,'{}','2026-12-04T17:57:27.749Z');
INSERT INTO cd_trust_registry VALUES('oc:*',3,'{}','2026-12-04T17:57:27.749Z');
INSERT INTO cd_trust_registry VALUES('local:*',2,'{}','2026-12-04T17:57:27.749Z');
INSERT INTO cd_trust_registry VALUES('cc:alice',2,'{}','2026-12-04T17:57:27.750Z');
INSERT INTO cd_trust_registry VALUES('local:bob',1,'{}','2026-12-04T17:57:27.758Z');
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
INSERT INTO cd_policy_audit_log VALUES(1,'2026-12-04T17:57:29.328Z','local:ws-9343e1e1','read_file',2,'Allow','trust_level_default_allow',0,29,'handler','stdio','5',1965,'ok',NULL,0);
INSERT INTO cd_policy_audit_log VALUES(2,'2026-12-04T17:57:29.328Z','local:ws-9343e1e1','list_dir',2,'Deny','unknown_tool',0,32,'lookup','stdio','3',1965,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(3,'2026-12-04T17:57:29.328Z','local:ws-9343e1e1','bash',2,'Deny','unknown_tool',0,20,'lookup','stdio','4',1965,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(4,'2026-12-04T17:57:30.852Z','local:ws-9343e1e1','read_file',2,'Allow','trust_level_default_allow',0,24,'handler','stdio','5',1986,'ok',NULL,0);
INSERT INTO cd_policy_audit_log VALUES(5,'2026-12-04T17:57:30.852Z','local:ws-9343e1e1','list_dir',2,'Deny','unknown_tool',0,21,'lookup','stdio','3',1986,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(6,'2026-12-04T17:57:30.852Z','local:ws-9343e1e1','bash',2,'Deny','unknown_tool',0,24,'lookup','stdio','4',1986,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(7,'2026-12-04T17:57:32.373Z','local:ws-9343e1e1','list_dir',2,'Deny','unknown_tool',0,100,'lookup','stdio','3',2007,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(8,'2026-12-04T17:57:32.373Z','local:ws-9343e1e1','read_file',2,'Allow','trust_level_default_allow',0,49,'handler','stdio','5',2007,'ok',NULL,0);
INSERT INTO cd_policy_audit_log VALUES(9,'2026-12-04T17:57:32.373Z','local:ws-9343e1e1','bash',2,'Deny','unknown_tool',0,31,'lookup','stdio','4',2007,NULL,NULL,NULL);
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
INSERT INTO cd_generation VALUES(1,5);
CREATE TRIGGER cd_trust_registry_ai AFTER INSERT ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_trust_registry_au AFTER UPDATE ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_trust_registry_ad AFTER DELETE ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_ai AFTER INSERT ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_au AFTER UPDATE ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_ad AFTER DELETE ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_ai AFTER INSERT ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_au AFTER UPDATE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_ad AFTER DELETE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
COMMIT;
