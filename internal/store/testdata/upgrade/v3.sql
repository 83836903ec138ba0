-- A database written by clawd a804102 (schema version 3): clawd init, trust rows,
-- upstream servers, approvals, egress, credentials and tool calls, as that version could.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE cd_schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	) STRICT;
INSERT INTO cd_schema_migrations VALUES(1,'2026-12-04T17:57:47.150Z');
INSERT INTO cd_schema_migrations VALUES(2,'2026-12-04T17:57:47.151Z');
INSERT INTO cd_schema_migrations VALUES(3,'2026-12-04T17:57:47.151Z');
CREATE TABLE cd_trust_registry (
	entity_id   TEXT PRIMARY KEY NOT NULL,
	trust_level INTEGER NOT NULL CHECK (trust_level BETWEEN 0 AND 3),
	permissions TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(permissions) AND json_type(permissions) = 'object'),
	updated_at  TEXT NOT NULL
) STRICT;
INSERT INTO cd_trust_registry VALUES('cc:*',3,'{}','2026-12-04T17:57:47.150Z');
INSERT INTO cd_trust_registry VALUES('oc:*',3,'{}','2026-12-04T17:57:47.150Z');
INSERT INTO cd_trust_registry VALUES('local:*',2,'{}','2026-12-04T17:57:47.150Z');
INSERT INTO cd_trust_registry VALUES('cc:alice',2,'{}','2026-12-04T17:57:47.152Z');
INSERT INTO cd_trust_registry VALUES('local:bob',1,'{}','2026-12-04T17:57:47.161Z');
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
INSERT INTO cd_policy_audit_log VALUES(1,'2026-12-04T17:57:48.741Z','local:ws-76ef2577','list_dir',2,'Allow','trust_level_default_allow',0,88,'handler','stdio','3',2630,'ok',NULL,0,'claude-code',NULL,'4ae486c3a48f8dc732af672b138b438a1d96960304cc334d46bbc2687d169cbb','path: .');
INSERT INTO cd_policy_audit_log VALUES(2,'2026-12-04T17:57:48.741Z','local:ws-76ef2577','read_file',2,'Allow','trust_level_default_allow',0,63,'handler','stdio','5',2630,'ok',NULL,0,'claude-code',NULL,'0c4ec1c861cfe3f43d6259fca4861beee0936d7556ba508576b707ff134f173e','path: f.txt');
INSERT INTO cd_policy_audit_log VALUES(3,'2026-12-04T17:57:48.741Z','local:ws-76ef2577','bash',2,'Allow','trust_level_default_allow',0,45,'handler','stdio','4',2630,'ok',NULL,3,'claude-code',NULL,'1eab1ef18bb109ae99f48bfe7efaba9dde08e27bdb46438214bd6c65eb3ff2ff','command: echo hi');
INSERT INTO cd_policy_audit_log VALUES(4,'2026-12-04T17:57:50.274Z','local:ws-76ef2577','read_file',2,'Allow','trust_level_default_allow',0,13,'handler','stdio','5',2688,'ok',NULL,0,'claude-code',NULL,'0c4ec1c861cfe3f43d6259fca4861beee0936d7556ba508576b707ff134f173e','path: f.txt');
INSERT INTO cd_policy_audit_log VALUES(5,'2026-12-04T17:57:50.275Z','local:ws-76ef2577','list_dir',2,'Allow','trust_level_default_allow',0,4,'handler','stdio','3',2688,'ok',NULL,0,'claude-code',NULL,'4ae486c3a48f8dc732af672b138b438a1d96960304cc334d46bbc2687d169cbb','path: .');
INSERT INTO cd_policy_audit_log VALUES(6,'2026-12-04T17:57:50.275Z','local:ws-76ef2577','bash',2,'Allow','trust_level_default_allow',0,2,'handler','stdio','4',2688,'ok',NULL,2,'claude-code',NULL,'1eab1ef18bb109ae99f48bfe7efaba9dde08e27bdb46438214bd6c65eb3ff2ff','command: echo hi');
INSERT INTO cd_policy_audit_log VALUES(7,'2026-12-04T17:57:51.802Z','local:ws-76ef2577','read_file',2,'Allow','trust_level_default_allow',0,15,'handler','stdio','5',2781,'ok',NULL,2,'claude-code',NULL,'0c4ec1c861cfe3f43d6259fca4861beee0936d7556ba508576b707ff134f173e','path: f.txt');
INSERT INTO cd_policy_audit_log VALUES(8,'2026-12-04T17:57:51.802Z','local:ws-76ef2577','list_dir',2,'Allow','trust_level_default_allow',0,4,'handler','stdio','3',2781,'ok',NULL,0,'claude-code',NULL,'4ae486c3a48f8dc732af672b138b438a1d96960304cc334d46bbc2687d169cbb','path: .');
INSERT INTO cd_policy_audit_log VALUES(9,'2026-12-04T17:57:51.803Z','local:ws-76ef2577','bash',2,'Allow','trust_level_default_allow',0,2,'handler','stdio','4',2781,'ok',NULL,3,'claude-code',NULL,'1eab1ef18bb109ae99f48bfe7efaba9dde08e27bdb46438214bd6c65eb3ff2ff','command: echo hi');
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
INSERT INTO cd_client_credential VALUES('22fdbafb53fd7e28','ws-76ef2577','cc','laptop','138195fd1eb4a434f17fa148a602056cca04b92d1137dd451a612ad521b1480d','2026-12-04T17:57:47.202Z',NULL);
INSERT INTO cd_client_credential VALUES('fddf8ce034621635','ws-76ef2577','oc','','db00c3a617efa649766d4599e4aa4be76d3555e977d0334c003ecc4b910abfae','2026-12-04T17:57:47.213Z',NULL);
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
CREATE INDEX cd_policy_audit_log_timestamp ON cd_policy_audit_log (timestamp);
COMMIT;
