-- A database written by clawd bac813c (schema version 8): clawd init, trust rows,
-- upstream servers, approvals, egress, credentials and tool calls, as that version could.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE cd_schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TEXT NOT NULL
	) STRICT;
INSERT INTO cd_schema_migrations VALUES(1,'2026-12-04T17:58:06.747Z');
INSERT INTO cd_schema_migrations VALUES(2,'2026-12-04T17:58:06.748Z');
INSERT INTO cd_schema_migrations VALUES(3,'2026-12-04T17:58:06.749Z');
INSERT INTO cd_schema_migrations VALUES(4,'2026-12-04T17:58:06.750Z');
INSERT INTO cd_schema_migrations VALUES(5,'2026-12-04T17:58:06.750Z');
INSERT INTO cd_schema_migrations VALUES(6,'2026-12-04T17:58:06.752Z');
INSERT INTO cd_schema_migrations VALUES(7,'2026-12-04T17:58:06.753Z');
INSERT INTO cd_schema_migrations VALUES(8,'2026-12-04T17:58:06.754Z');
CREATE TABLE cd_trust_registry (
	entity_id   TEXT PRIMARY KEY NOT NULL,
	trust_level INTEGER NOT NULL CHECK (trust_level BETWEEN 0 AND 3),
	permissions TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(permissions) AND json_type(permissions) = 'object'),
	updated_at  TEXT NOT NULL
) STRICT;
INSERT INTO cd_trust_registry VALUES('cc:*',3,'{}','2026-12-04T17:58:06.747Z');
INSERT INTO cd_trust_registry VALUES('oc:*',3,'{}','2026-12-04T17:58:06.747Z');
INSERT INTO cd_trust_registry VALUES('local:*',2,'{}','2026-12-04T17:58:06.747Z');
INSERT INTO cd_trust_registry VALUES('cc:alice',2,'{}','2026-12-04T17:58:06.756Z');
INSERT INTO cd_trust_registry VALUES('local:bob',1,'{}','2026-12-04T17:58:06.772Z');
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
, client_claim TEXT, credential_id TEXT, args_sha256 TEXT, args_summary TEXT, server TEXT) STRICT;
INSERT INTO cd_policy_audit_log VALUES(1,'2026-12-04T17:58:06.865Z','local:cli','mcp:fake',NULL,'Allow','approve: executable /tmp/mig-bin/fakeserver sha256 cab7f094c107bcfba5f4d0546bc5cd16d2f762880dabc116d93139e861d07b40',0,0,'upstream','cli','',3731,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(2,'2026-12-04T17:58:06.923Z','local:cli','egress:https://api.example.com:443',NULL,'Allow','approve: egress to https://api.example.com:443',0,0,'upstream','cli','',3748,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(3,'2026-12-04T17:58:08.550Z','local:ws-817c79fe','read_file',2,'Allow','trust_level_default_allow',1,1028,'handler','stdio','5',3904,'ok',NULL,0,'claude-code',NULL,'0c4ec1c861cfe3f43d6259fca4861beee0936d7556ba508576b707ff134f173e','path: f.txt',NULL);
INSERT INTO cd_policy_audit_log VALUES(4,'2026-12-04T17:58:08.588Z','clawd','mcp:fake',NULL,'Allow','spawn: command "/tmp/mig-bin/fakeserver"; sha256 cab7f094c107bcfba5f4d0546bc5cd16d2f762880dabc116d93139e861d07b40; pid 3913',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'fake');
INSERT INTO cd_policy_audit_log VALUES(5,'2026-12-04T17:58:08.554Z','local:ws-817c79fe','list_dir',2,'Allow','trust_level_default_allow',35,34634,'handler','stdio','3',3904,'ok',NULL,0,'claude-code',NULL,'4ae486c3a48f8dc732af672b138b438a1d96960304cc334d46bbc2687d169cbb','path: .',NULL);
INSERT INTO cd_policy_audit_log VALUES(6,'2026-12-04T17:58:08.556Z','local:ws-817c79fe','bash',2,'Allow','trust_level_default_allow',32,31858,'handler','stdio','4',3904,'ok',NULL,3,'claude-code',NULL,'1eab1ef18bb109ae99f48bfe7efaba9dde08e27bdb46438214bd6c65eb3ff2ff','command: echo hi',NULL);
INSERT INTO cd_policy_audit_log VALUES(7,'2026-12-04T17:58:08.590Z','clawd','mcp:fake/echo',NULL,'Deny','definition_changed: new tool, sha256 b952fa4d16f8fa78ad8a011aeee72ce4c00a1da38ebc12b0babce344e31117e6; withheld until clawd mcp approve fake fake__echo',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(8,'2026-12-04T17:58:08.595Z','clawd','mcp:fake/image',NULL,'Deny','definition_changed: new tool, sha256 0c3fa3ecef8ef89051c2d9e4e97c4e8c6865e3a58bbbc830a53b3aeff45cbcd7; withheld until clawd mcp approve fake fake__image',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(9,'2026-12-04T17:58:08.595Z','clawd','mcp:remote',NULL,'Deny','egress_refused: origin https://mcp.example.com:443 is not on the egress allowlist, so clawd did not connect to it; if you trust it: clawd egress allow https://mcp.example.com:443',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'remote');
INSERT INTO cd_policy_audit_log VALUES(10,'2026-12-04T17:58:08.597Z','clawd','mcp:fake/slow',NULL,'Deny','definition_changed: new tool, sha256 49ffb798eb09e6d397554b05a7e091b2f661abf5306231464ba9d98ed0660c61; withheld until clawd mcp approve fake fake__slow',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(11,'2026-12-04T17:58:08.597Z','clawd','mcp:fake/change',NULL,'Deny','definition_changed: new tool, sha256 714e45a59c0ee178d9224a08238c6469e430063174ffea55f8ff3c05d0fa333e; withheld until clawd mcp approve fake fake__change',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(12,'2026-12-04T17:58:08.597Z','clawd','mcp:fake/big',NULL,'Deny','definition_changed: new tool, sha256 8be5984e07749c3d450313f5c9139d747d2de852060a138c2a6fe4ca9667f021; withheld until clawd mcp approve fake fake__big',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(13,'2026-12-04T17:58:08.597Z','clawd','mcp:fake/env',NULL,'Deny','definition_changed: new tool, sha256 6673b7bbcc81c420bea969cc0409f9da5fb1971b45f015d2d3ad1ef0ff489857; withheld until clawd mcp approve fake fake__env',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(14,'2026-12-04T17:58:08.597Z','clawd','mcp:fake/Upper.Case!',NULL,'Deny','definition_changed: new tool, sha256 1db12bc280d941cb320924e01790f81ae7a1526bb5462bbdb238fd4299f6b4ec; withheld until clawd mcp approve fake fake__Upper_Case__90c76e77',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO cd_policy_audit_log VALUES(15,'2026-12-04T17:58:08.598Z','clawd','mcp:fake',NULL,'Allow','connect: stdio pid 3913, 7 tools',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'fake');
INSERT INTO cd_policy_audit_log VALUES(16,'2026-12-04T17:58:08.601Z','clawd','mcp:fake',NULL,'Allow','disconnect: stopped (the server was removed, disabled or changed, or clawd is stopping)',0,0,'upstream','daemon','',3904,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'fake');
INSERT INTO cd_policy_audit_log VALUES(17,'2026-12-04T17:58:10.183Z','local:ws-817c79fe','read_file',2,'Allow','trust_level_default_allow',0,16,'handler','stdio','5',4016,'ok',NULL,0,'claude-code',NULL,'0c4ec1c861cfe3f43d6259fca4861beee0936d7556ba508576b707ff134f173e','path: f.txt',NULL);
INSERT INTO cd_policy_audit_log VALUES(18,'2026-12-04T17:58:10.183Z','local:ws-817c79fe','list_dir',2,'Allow','trust_level_default_allow',0,4,'handler','stdio','3',4016,'ok',NULL,0,'claude-code',NULL,'4ae486c3a48f8dc732af672b138b438a1d96960304cc334d46bbc2687d169cbb','path: .',NULL);
INSERT INTO cd_policy_audit_log VALUES(19,'2026-12-04T17:58:10.183Z','local:ws-817c79fe','bash',2,'Allow','trust_level_default_allow',0,2,'handler','stdio','4',4016,'ok',NULL,5,'claude-code',NULL,'1eab1ef18bb109ae99f48bfe7efaba9dde08e27bdb46438214bd6c65eb3ff2ff','command: echo hi',NULL);
INSERT INTO cd_policy_audit_log VALUES(20,'2026-12-04T17:58:10.195Z','clawd','mcp:remote',NULL,'Deny','egress_refused: origin https://mcp.example.com:443 is not on the egress allowlist, so clawd did not connect to it; if you trust it: clawd egress allow https://mcp.example.com:443',0,0,'upstream','daemon','',4016,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'remote');
INSERT INTO cd_policy_audit_log VALUES(21,'2026-12-04T17:58:10.198Z','clawd','mcp:fake',NULL,'Allow','spawn: command "/tmp/mig-bin/fakeserver"; sha256 cab7f094c107bcfba5f4d0546bc5cd16d2f762880dabc116d93139e861d07b40; pid 4027',0,0,'upstream','daemon','',4016,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'fake');
INSERT INTO cd_policy_audit_log VALUES(22,'2026-12-04T17:58:11.756Z','local:ws-817c79fe','read_file',2,'Allow','trust_level_default_allow',0,19,'handler','stdio','5',4081,'ok',NULL,0,'claude-code',NULL,'0c4ec1c861cfe3f43d6259fca4861beee0936d7556ba508576b707ff134f173e','path: f.txt',NULL);
INSERT INTO cd_policy_audit_log VALUES(23,'2026-12-04T17:58:11.772Z','local:ws-817c79fe','list_dir',2,'Allow','trust_level_default_allow',0,14,'handler','stdio','3',4081,'ok',NULL,0,'claude-code',NULL,'4ae486c3a48f8dc732af672b138b438a1d96960304cc334d46bbc2687d169cbb','path: .',NULL);
INSERT INTO cd_policy_audit_log VALUES(24,'2026-12-04T17:58:11.772Z','local:ws-817c79fe','bash',2,'Allow','trust_level_default_allow',0,57,'handler','stdio','4',4081,'ok',NULL,5,'claude-code',NULL,'1eab1ef18bb109ae99f48bfe7efaba9dde08e27bdb46438214bd6c65eb3ff2ff','command: echo hi',NULL);
INSERT INTO cd_policy_audit_log VALUES(25,'2026-12-04T17:58:11.806Z','clawd','mcp:remote',NULL,'Deny','egress_refused: origin https://mcp.example.com:443 is not on the egress allowlist, so clawd did not connect to it; if you trust it: clawd egress allow https://mcp.example.com:443',0,0,'upstream','daemon','',4081,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'remote');
INSERT INTO cd_policy_audit_log VALUES(26,'2026-12-04T17:58:11.813Z','clawd','mcp:fake',NULL,'Allow','spawn: command "/tmp/mig-bin/fakeserver"; sha256 cab7f094c107bcfba5f4d0546bc5cd16d2f762880dabc116d93139e861d07b40; pid 4092',0,0,'upstream','daemon','',4081,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'fake');
INSERT INTO cd_policy_audit_log VALUES(27,'2026-12-04T17:58:11.816Z','clawd','mcp:fake',NULL,'Allow','connect: stdio pid 4092, 7 tools',0,0,'upstream','daemon','',4081,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'fake');
CREATE TABLE cd_mcp_server_allowlist (
	server_id TEXT NOT NULL,
	sha256    TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
	added_at  TEXT NOT NULL,
	PRIMARY KEY (server_id, sha256)
) STRICT;
INSERT INTO cd_mcp_server_allowlist VALUES('fake','cab7f094c107bcfba5f4d0546bc5cd16d2f762880dabc116d93139e861d07b40','2026-12-04T17:58:06.860Z');
CREATE TABLE cd_generation (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
) STRICT;
INSERT INTO cd_generation VALUES(1,9);
CREATE TABLE cd_client_credential (
	id            TEXT PRIMARY KEY NOT NULL CHECK (length(id) = 16 AND id NOT GLOB '*[^0-9a-f]*'),
	workspace_id  TEXT NOT NULL,
	kind          TEXT NOT NULL,
	label         TEXT NOT NULL DEFAULT '',
	secret_sha256 TEXT NOT NULL CHECK (length(secret_sha256) = 64 AND secret_sha256 NOT GLOB '*[^0-9a-f]*'),
	created_at    TEXT NOT NULL,
	revoked_at    TEXT
) STRICT;
INSERT INTO cd_client_credential VALUES('d1a11f6f4fc31e25','ws-817c79fe','cc','laptop','c1fb7894e55c421e08596ba6de6ec84433f4c7c1b4948bea53b4bd3b3e8e09b2','2026-12-04T17:58:06.951Z',NULL);
INSERT INTO cd_client_credential VALUES('d305b1adba0a5b23','ws-817c79fe','oc','','b329d68ff09a9bddb09cc1c3835d4fca22a0e713b3c000a5882232b5a286f22a','2026-12-04T17:58:06.974Z',NULL);
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
	tool_count          INTEGER NOT NULL DEFAULT 0 CHECK (tool_count >= 0), identity_mode TEXT NOT NULL DEFAULT 'off' CHECK (identity_mode IN ('off', 'meta', 'signed')), identity_arg TEXT CHECK (length(identity_arg) BETWEEN 1 AND 64 AND identity_arg NOT GLOB '*[^A-Za-z0-9_]*'), identity_audience TEXT CHECK (length(identity_audience) BETWEEN 1 AND 256),
	CHECK ((builtin = 1) = (transport = 'builtin')),
	CHECK (transport <> 'builtin' OR (command IS NULL AND url IS NULL AND cwd IS NULL AND args = '[]' AND env = '{}' AND headers = '{}')),
	CHECK (transport <> 'stdio' OR (command IS NOT NULL AND url IS NULL AND headers = '{}')),
	CHECK (transport NOT IN ('http', 'sse') OR (url IS NOT NULL AND command IS NULL AND cwd IS NULL AND args = '[]' AND env = '{}'))
) STRICT;
INSERT INTO cd_mcp_server VALUES(1,'clawd','clawd''s own tools: bash, read_file, write_file, list_dir, search','builtin',NULL,'[]',NULL,'{}',NULL,'{}',30,60,1,1,'2026-12-04T17:58:06.750Z','2026-12-04T17:58:06.750Z','connected',NULL,NULL,5,'off',NULL,NULL);
INSERT INTO cd_mcp_server VALUES(2,'fake','','stdio','/tmp/mig-bin/fakeserver','[]',NULL,'{}',NULL,'{}',30,60,1,0,'2026-12-04T17:58:06.800Z','2026-12-04T17:58:06.800Z','connected',NULL,'2026-12-04T17:58:11.816Z',7,'off',NULL,NULL);
INSERT INTO cd_mcp_server VALUES(3,'remote','','http',NULL,'[]',NULL,'{}','https://mcp.example.com/mcp','{}',30,60,1,0,'2026-12-04T17:58:06.820Z','2026-12-04T17:58:06.820Z','unavailable','origin https://mcp.example.com:443 is not on the egress allowlist, so clawd did not connect to it; if you trust it: clawd egress allow https://mcp.example.com:443',NULL,0,'off',NULL,NULL);
INSERT INTO cd_mcp_server VALUES(4,'off','','stdio','/tmp/mig-bin/fakeserver','[]',NULL,'{}',NULL,'{}',30,60,0,0,'2026-12-04T17:58:06.840Z','2026-12-04T17:58:06.840Z','disabled',NULL,NULL,0,'off',NULL,NULL);
CREATE TABLE cd_mcp_server_tool (
	server_id    INTEGER NOT NULL REFERENCES cd_mcp_server (id) ON DELETE CASCADE,
	name         TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 1024),
	description  TEXT NOT NULL DEFAULT '',
	input_schema TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(input_schema) AND json_type(input_schema) = 'object'),
	last_seen_at TEXT NOT NULL,
	PRIMARY KEY (server_id, name)
) STRICT;
INSERT INTO cd_mcp_server_tool VALUES(2,'fake__echo','the echo tool','{"type":"object","properties":{"x":{"type":"string"}},"required":[]}','2026-12-04T17:58:11.816Z');
INSERT INTO cd_mcp_server_tool VALUES(2,'fake__image','the image tool','{"type":"object","properties":{"x":{"type":"string"}},"required":[]}','2026-12-04T17:58:11.816Z');
INSERT INTO cd_mcp_server_tool VALUES(2,'fake__slow','the slow tool','{"type":"object","properties":{"x":{"type":"string"}},"required":[]}','2026-12-04T17:58:11.816Z');
INSERT INTO cd_mcp_server_tool VALUES(2,'fake__change','the change tool','{"type":"object","properties":{"x":{"type":"string"}},"required":[]}','2026-12-04T17:58:11.816Z');
INSERT INTO cd_mcp_server_tool VALUES(2,'fake__big','the big tool','{"type":"object","properties":{"x":{"type":"string"}},"required":[]}','2026-12-04T17:58:11.816Z');
INSERT INTO cd_mcp_server_tool VALUES(2,'fake__env','the env tool','{"type":"object","properties":{"x":{"type":"string"}},"required":[]}','2026-12-04T17:58:11.816Z');
INSERT INTO cd_mcp_server_tool VALUES(2,'fake__Upper_Case__90c76e77','the Upper.Case! tool','{"type":"object","properties":{"x":{"type":"string"}},"required":[]}','2026-12-04T17:58:11.816Z');
CREATE TABLE cd_mcp_server_generation (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	n  INTEGER NOT NULL
) STRICT;
INSERT INTO cd_mcp_server_generation VALUES(1,4);
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
INSERT INTO cd_mcp_tool_approval VALUES(2,'echo','fake__echo',1,'b952fa4d16f8fa78ad8a011aeee72ce4c00a1da38ebc12b0babce344e31117e6','{"description":"the echo tool","inputSchema":{"properties":{"x":{"type":"string"}},"required":[],"type":"object"},"name":"echo"}','2026-12-04T17:58:08.589Z',NULL,NULL,NULL,NULL);
INSERT INTO cd_mcp_tool_approval VALUES(2,'image','fake__image',1,'0c3fa3ecef8ef89051c2d9e4e97c4e8c6865e3a58bbbc830a53b3aeff45cbcd7','{"description":"the image tool","inputSchema":{"properties":{"x":{"type":"string"}},"required":[],"type":"object"},"name":"image"}','2026-12-04T17:58:08.589Z',NULL,NULL,NULL,NULL);
INSERT INTO cd_mcp_tool_approval VALUES(2,'slow','fake__slow',1,'49ffb798eb09e6d397554b05a7e091b2f661abf5306231464ba9d98ed0660c61','{"description":"the slow tool","inputSchema":{"properties":{"x":{"type":"string"}},"required":[],"type":"object"},"name":"slow"}','2026-12-04T17:58:08.589Z',NULL,NULL,NULL,NULL);
INSERT INTO cd_mcp_tool_approval VALUES(2,'change','fake__change',1,'714e45a59c0ee178d9224a08238c6469e430063174ffea55f8ff3c05d0fa333e','{"description":"the change tool","inputSchema":{"properties":{"x":{"type":"string"}},"required":[],"type":"object"},"name":"change"}','2026-12-04T17:58:08.589Z',NULL,NULL,NULL,NULL);
INSERT INTO cd_mcp_tool_approval VALUES(2,'big','fake__big',1,'8be5984e07749c3d450313f5c9139d747d2de852060a138c2a6fe4ca9667f021','{"description":"the big tool","inputSchema":{"properties":{"x":{"type":"string"}},"required":[],"type":"object"},"name":"big"}','2026-12-04T17:58:08.589Z',NULL,NULL,NULL,NULL);
INSERT INTO cd_mcp_tool_approval VALUES(2,'env','fake__env',1,'6673b7bbcc81c420bea969cc0409f9da5fb1971b45f015d2d3ad1ef0ff489857','{"description":"the env tool","inputSchema":{"properties":{"x":{"type":"string"}},"required":[],"type":"object"},"name":"env"}','2026-12-04T17:58:08.589Z',NULL,NULL,NULL,NULL);
INSERT INTO cd_mcp_tool_approval VALUES(2,'Upper.Case!','fake__Upper_Case__90c76e77',1,'1db12bc280d941cb320924e01790f81ae7a1526bb5462bbdb238fd4299f6b4ec','{"description":"the Upper.Case! tool","inputSchema":{"properties":{"x":{"type":"string"}},"required":[],"type":"object"},"name":"Upper.Case!"}','2026-12-04T17:58:08.589Z',NULL,NULL,NULL,NULL);
CREATE TABLE cd_egress_allowlist (
	scheme   TEXT NOT NULL CHECK (scheme IN ('http', 'https')),
	host     TEXT NOT NULL CHECK (length(host) BETWEEN 1 AND 253 AND host NOT GLOB '*[^a-z0-9._:-]*' AND host NOT GLOB '*.'),
	port     INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
	private  INTEGER NOT NULL DEFAULT 0 CHECK (private IN (0, 1)),
	added_at TEXT NOT NULL,
	PRIMARY KEY (scheme, host, port)
) STRICT;
INSERT INTO cd_egress_allowlist VALUES('https','api.example.com',443,0,'2026-12-04T17:58:06.913Z');
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
CREATE TRIGGER cd_trust_registry_ai AFTER INSERT ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_trust_registry_au AFTER UPDATE ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_trust_registry_ad AFTER DELETE ON cd_trust_registry BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_ai AFTER INSERT ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_au AFTER UPDATE ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_allowlist_ad AFTER DELETE ON cd_mcp_server_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
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
CREATE TRIGGER cd_mcp_server_identity_au AFTER UPDATE OF identity_mode, identity_arg, identity_audience ON cd_mcp_server
	BEGIN UPDATE cd_mcp_server_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_identity_builtin_bu BEFORE UPDATE OF identity_mode, identity_arg, identity_audience ON cd_mcp_server
	WHEN old.builtin = 1 BEGIN SELECT RAISE(ABORT, 'the built-in server cannot be changed'); END;
CREATE TRIGGER cd_egress_allowlist_ai AFTER INSERT ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_au AFTER UPDATE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_egress_allowlist_ad AFTER DELETE ON cd_egress_allowlist BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_pin_ai AFTER INSERT ON cd_mcp_server_pin BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_pin_au AFTER UPDATE ON cd_mcp_server_pin BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
CREATE TRIGGER cd_mcp_server_pin_ad AFTER DELETE ON cd_mcp_server_pin BEGIN UPDATE cd_generation SET n = n + 1 WHERE id = 1; END;
COMMIT;
