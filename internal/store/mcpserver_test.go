package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var ctx = context.Background()

func mustInsert(t *testing.T, db *DB, s MCPServer) MCPServer {
	t.Helper()
	got, err := db.InsertServer(ctx, s)
	if err != nil {
		t.Fatalf("InsertServer(%s): %v", s.Name, err)
	}
	return got
}

func mcpGen(t *testing.T, db *DB) int64 {
	t.Helper()
	n, err := db.MCPServersGeneration(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// An existing database at schema version 3, with data in every table the
// earlier versions made, upgrades to the current version in place: the
// data stays, the built-in server row and the counters appear.
func TestMigrateFromVersion3KeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	r := raw(t, path)
	if _, err := r.Exec(`CREATE TABLE cd_schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	for v := 0; v < 3; v++ {
		if _, err := r.Exec(migrations[v]); err != nil {
			t.Fatalf("migration %d: %v", v+1, err)
		}
		if _, err := r.Exec(`INSERT INTO cd_schema_migrations VALUES (?, 'then')`, v+1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Exec(`INSERT INTO cd_trust_registry VALUES ('device:phone', 1, '{"search":"deny"}', 'then');
		INSERT INTO cd_mcp_server_allowlist VALUES ('fs', '` + strings.Repeat("a", 64) + `', 'then');
		INSERT INTO cd_policy_audit_log (timestamp, entity_id, tool_id, result, reason, latency_ms, latency_us, step, transport, request_id, pid, args_summary)
			VALUES ('then', 'cc:x', 'bash', 'Allow', 'ok', 0, 1, 'policy', 'stdio', '1', 1, 'ls')`); err != nil {
		t.Fatal(err)
	}
	var trustGen int64
	r.QueryRow(`SELECT n FROM cd_generation`).Scan(&trustGen)
	r.Close()

	db := openTest(t, path)
	rows, err := db.TrustRows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range rows {
		found = found || row.Entity == "device:phone" && row.Perms["search"] == "deny"
	}
	if !found {
		t.Errorf("trust row lost in the upgrade: %+v", rows)
	}
	if ok, _ := db.ServerAllowed("fs", strings.Repeat("a", 64)); !ok {
		t.Error("allowlist entry lost in the upgrade")
	}
	var audit int
	rr := raw(t, path)
	rr.QueryRow(`SELECT count(*) FROM cd_policy_audit_log WHERE args_summary = 'ls'`).Scan(&audit)
	if audit != 1 {
		t.Errorf("audit rows after upgrade = %d, want 1", audit)
	}
	var version int
	rr.QueryRow(`SELECT max(version) FROM cd_schema_migrations`).Scan(&version)
	if version != SchemaVersion || SchemaVersion < 4 {
		t.Errorf("schema version %d after upgrade, SchemaVersion %d; want the latest (at least 4)", version, SchemaVersion)
	}
	if g, _ := db.Generation(); g != trustGen {
		t.Errorf("the upgrade moved the trust generation %d -> %d; daemons would reload for nothing", trustGen, g)
	}
	list, err := db.MCPServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != BuiltinServerName || !list[0].Builtin || list[0].Transport != TransportBuiltin || list[0].ToolCount != 5 || !list[0].Enabled {
		t.Fatalf("after upgrade: %+v, want the one built-in row", list)
	}
	// A second open does not migrate again or add a second built-in row.
	db.Close()
	db = openTest(t, path)
	if list, _ := db.MCPServers(ctx); len(list) != 1 {
		t.Errorf("reopen: %d rows", len(list))
	}
}

func TestMCPServerCRUDAndPatch(t *testing.T) {
	db := openTest(t, "")
	fs := NewStdioServer("fs", "npx", []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp/x y"})
	fs.Cwd = "/tmp"
	fs.Env = SecretMap{"TOKEN": "${GITHUB_TOKEN}", "MODE": "literal-value"}
	got := mustInsert(t, db, fs)
	if got.ID == 0 || got.Builtin || got.LastStatus != StatusDisconnected || got.CreatedAt == "" || got.ConnectTimeoutSeconds != 30 || got.ReadTimeoutSeconds != 60 {
		t.Fatalf("inserted row: %+v", got.View())
	}
	if got.Env["MODE"] != "literal-value" || got.Env["TOKEN"] != "${GITHUB_TOKEN}" || got.Args[2] != "/tmp/x y" || got.Cwd != "/tmp" {
		t.Fatalf("stored values changed: env %d entries, args %q", len(got.Env), got.Args)
	}
	byName, err := db.MCPServerByName(ctx, "FS")
	if err != nil || byName.ID != got.ID {
		t.Fatalf("MCPServerByName(FS) = %v, %v; names are found without regard to case", byName.ID, err)
	}
	if _, err := db.MCPServerByName(ctx, "nope"); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("missing server: %v", err)
	}
	remote := mustInsert(t, db, NewHTTPServer("remote", TransportHTTP, "https://mcp.example.com/mcp"))

	list, _ := db.MCPServers(ctx)
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "clawd,fs,remote" {
		t.Errorf("list order %v: built-in first, then by name", names)
	}

	// PATCH: only the given fields change.
	desc, rt := "files", 120
	upd, err := db.UpdateServer(ctx, got.ID, MCPServerPatch{Description: &desc, ReadTimeoutSeconds: &rt})
	if err != nil {
		t.Fatal(err)
	}
	if upd.Description != "files" || upd.ReadTimeoutSeconds != 120 || upd.Command != "npx" || len(upd.Args) != 3 || upd.Env["MODE"] != "literal-value" || upd.Cwd != "/tmp" || upd.ConnectTimeoutSeconds != 30 {
		t.Errorf("patch changed more than asked: %+v", upd.View())
	}
	// Switching transport clears the other kind's fields.
	tr, u := "streamable_http", "http://127.0.0.1:9/mcp"
	upd, err = db.UpdateServer(ctx, got.ID, MCPServerPatch{Transport: &tr, URL: &u})
	if err != nil {
		t.Fatal(err)
	}
	if upd.Transport != TransportHTTP || upd.Command != "" || len(upd.Args) != 0 || upd.Cwd != "" || len(upd.Env) != 0 || upd.URL != u {
		t.Errorf("transport switch: %+v", upd.View())
	}
	// A patch that leaves an invalid row changes nothing.
	cmd := "node"
	if _, err := db.UpdateServer(ctx, got.ID, MCPServerPatch{Command: &cmd}); !IsValidation(err) {
		t.Errorf("command on an http server: %v, want a validation error", err)
	}
	bad := 4
	if _, err := db.UpdateServer(ctx, got.ID, MCPServerPatch{ConnectTimeoutSeconds: &bad}); !IsValidation(err) || !strings.Contains(err.Error(), "5-300") {
		t.Errorf("timeout 4: %v", err)
	}
	// Renaming onto another server's name, in any case, is refused.
	taken := "REMOTE"
	if _, err := db.UpdateServer(ctx, got.ID, MCPServerPatch{Name: &taken}); !errors.Is(err, ErrServerExists) {
		t.Errorf("rename onto REMOTE: %v", err)
	}
	// Renaming to its own name in another case is allowed.
	same := "FS"
	if s, err := db.UpdateServer(ctx, got.ID, MCPServerPatch{Name: &same}); err != nil || s.Name != "FS" {
		t.Errorf("rename fs -> FS: %v, %v", s.Name, err)
	}

	if changed, err := db.SetServerEnabled(ctx, remote.ID, false); err != nil || !changed {
		t.Errorf("disable: %v %v", changed, err)
	}
	if changed, err := db.SetServerEnabled(ctx, remote.ID, false); err != nil || changed {
		t.Errorf("disable twice: changed=%v %v", changed, err)
	}
	if s, _ := db.MCPServer(ctx, remote.ID); s.Enabled {
		t.Error("still enabled")
	}

	if err := db.ReplaceServerTools(ctx, remote.ID, []MCPTool{{Name: "echo"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteServer(ctx, remote.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.MCPServer(ctx, remote.ID); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if tools, _ := db.MCPTools(ctx, 0); len(tools) != 0 {
		t.Errorf("the deleted server's tools stayed in the cache: %+v", tools)
	}
	if err := db.DeleteServer(ctx, remote.ID); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("delete twice: %v", err)
	}
}

func TestMCPServerDuplicateNameAnyCase(t *testing.T) {
	db := openTest(t, "")
	mustInsert(t, db, NewStdioServer("GitHub", "gh-mcp", nil))
	for _, name := range []string{"GitHub", "github", "GITHUB", "clawd", "CLAWD"} {
		_, err := db.InsertServer(ctx, NewStdioServer(name, "x", nil))
		if !errors.Is(err, ErrServerExists) {
			t.Errorf("insert %s: %v, want ErrServerExists", name, err)
		}
	}
}

func TestMCPBuiltinRowIsFixed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	b, err := db.MCPServerByName(ctx, BuiltinServerName)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteServer(ctx, b.ID); !errors.Is(err, ErrBuiltinServer) {
		t.Errorf("DeleteServer(builtin) = %v", err)
	}
	if _, err := db.SetServerEnabled(ctx, b.ID, false); !errors.Is(err, ErrBuiltinServer) {
		t.Errorf("disable builtin = %v", err)
	}
	d := "x"
	if _, err := db.UpdateServer(ctx, b.ID, MCPServerPatch{Description: &d}); !errors.Is(err, ErrBuiltinServer) {
		t.Errorf("update builtin = %v", err)
	}
	if err := db.ReplaceServerTools(ctx, b.ID, nil, time.Now()); !errors.Is(err, ErrBuiltinServer) {
		t.Errorf("tools of builtin = %v", err)
	}
	// The database itself refuses, whoever writes (another build, a hand edit).
	r := raw(t, path)
	for _, q := range []string{
		`DELETE FROM cd_mcp_server WHERE builtin = 1`,
		`DELETE FROM cd_mcp_server`,
		`UPDATE cd_mcp_server SET enabled = 0 WHERE builtin = 1`,
		`UPDATE cd_mcp_server SET name = 'other' WHERE builtin = 1`,
		`INSERT INTO cd_mcp_server (name, transport, builtin, created_at, updated_at) VALUES ('two', 'builtin', 1, 'x', 'x')`,
	} {
		if _, err := r.Exec(q); err == nil {
			t.Errorf("%s: accepted", q)
		}
	}
	if after, err := db.MCPServer(ctx, b.ID); err != nil || !after.Enabled || after.Name != BuiltinServerName {
		t.Errorf("built-in row changed: %+v %v", after.View(), err)
	}
}

// The CHECK constraints hold against writers that skip the Go validation.
func TestMCPServerTableConstraints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	openTest(t, path)
	r := raw(t, path)
	if _, err := r.Exec(`INSERT INTO cd_mcp_server (name, transport, command, created_at, updated_at) VALUES ('ok', 'stdio', 'node', 'x', 'x')`); err != nil {
		t.Fatalf("a valid row was refused: %v", err)
	}
	cases := []struct {
		why                     string
		name, transport, cmd, u string
		ct, rt                  int
		args                    string
	}{
		{"empty name", "", "stdio", "node", "", 30, 60, "[]"},
		{"name of 129", strings.Repeat("a", 129), "stdio", "node", "", 30, 60, "[]"},
		{"dot in name", "a.b", "stdio", "node", "", 30, 60, "[]"},
		{"double underscore", "a__b", "stdio", "node", "", 30, 60, "[]"},
		{"trailing underscore", "ab_", "stdio", "node", "", 30, 60, "[]"},
		{"leading dash", "-ab", "stdio", "node", "", 30, 60, "[]"},
		{"duplicate in other case", "OK", "stdio", "node", "", 30, 60, "[]"},
		{"unknown transport", "t1", "websocket", "node", "", 30, 60, "[]"},
		{"connect timeout 4", "t2", "stdio", "node", "", 4, 60, "[]"},
		{"read timeout 301", "t3", "stdio", "node", "", 30, 301, "[]"},
		{"stdio without command", "t4", "stdio", "", "", 30, 60, "[]"},
		{"http without url", "t5", "http", "", "", 30, 60, "[]"},
		{"ftp url", "t6", "http", "", "ftp://x/", 30, 60, "[]"},
		{"args not an array", "t7", "stdio", "node", "", 30, 60, `{"a":1}`},
		{"builtin transport on a normal row", "t8", "builtin", "", "", 30, 60, "[]"},
	}
	for _, c := range cases {
		var cmd, u any
		if c.cmd != "" {
			cmd = c.cmd
		}
		if c.u != "" {
			u = c.u
		}
		_, err := r.Exec(`INSERT INTO cd_mcp_server (name, transport, command, url, connect_timeout_s, read_timeout_s, args, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'x', 'x')`, c.name, c.transport, cmd, u, c.ct, c.rt, c.args)
		if err == nil {
			t.Errorf("%s: accepted by the table", c.why)
		}
	}
	fk, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer fk.Close()
	if _, err := fk.Exec(`INSERT INTO cd_mcp_server_tool (server_id, name, last_seen_at) VALUES (99999, 'x', 'x')`); err == nil {
		t.Error("a tool of a server that does not exist was accepted")
	}
}

func TestMCPServerValidation(t *testing.T) {
	db := openTest(t, "")
	base := func() MCPServer { return NewStdioServer("srv", "node", []string{"server.js"}) }
	web := func() MCPServer { return NewHTTPServer("web", TransportHTTP, "https://h.example/mcp") }
	cases := []struct {
		why  string
		s    MCPServer
		want string
	}{
		{"empty name", func() MCPServer { s := base(); s.Name = ""; return s }(), "server name"},
		{"129 chars", func() MCPServer { s := base(); s.Name = strings.Repeat("x", 129); return s }(), "1-128"},
		{"space", func() MCPServer { s := base(); s.Name = "my server"; return s }(), "' ' is not allowed"},
		{"dot", func() MCPServer { s := base(); s.Name = "a.b"; return s }(), "'.' is not allowed"},
		{"__", func() MCPServer { s := base(); s.Name = "a__b"; return s }(), "reserved for the NAME__TOOL"},
		{"leading _", func() MCPServer { s := base(); s.Name = "_a"; return s }(), "start with a letter or digit"},
		{"no command", func() MCPServer { s := base(); s.Command = " "; return s }(), "needs a command"},
		{"relative cwd", func() MCPServer { s := base(); s.Cwd = "rel/dir"; return s }(), "absolute"},
		{"env name", func() MCPServer { s := base(); s.Env = SecretMap{"1X": "v"}; return s }(), "environment variable name"},
		{"clawd env", func() MCPServer { s := base(); s.Env = SecretMap{"CLAWD_TOKEN": "v"}; return s }(), "clawd's own"},
		{"ref to clawd var", func() MCPServer { s := base(); s.Env = SecretMap{"T": "${CLAWDE_TOKEN}"}; return s }(), "clawd's own variables"},
		{"unterminated ref", func() MCPServer { s := base(); s.Env = SecretMap{"T": "${TOKEN"}; return s }(), "unterminated ${"},
		{"bad ref", func() MCPServer { s := base(); s.Env = SecretMap{"T": "${1A}"}; return s }(), "not a variable name"},
		{"url on stdio", func() MCPServer { s := base(); s.URL = "http://x/"; return s }(), "no URL"},
		{"ftp", func() MCPServer { s := web(); s.URL = "ftp://h/x"; return s }(), "http or https"},
		{"no host", func() MCPServer { s := web(); s.URL = "https:///mcp"; return s }(), "no host"},
		{"userinfo", func() MCPServer { s := web(); s.URL = "https://u:pw@h/mcp"; return s }(), "user:password@"},
		{"fragment", func() MCPServer { s := web(); s.URL = "https://h/mcp#x"; return s }(), "fragment"},
		{"bad port", func() MCPServer { s := web(); s.URL = "https://h:99999/mcp"; return s }(), "port"},
		{"header name", func() MCPServer { s := web(); s.Headers = SecretMap{"Bad Name": "v"}; return s }(), "header name"},
		{"header CRLF", func() MCPServer { s := web(); s.Headers = SecretMap{"X-A": "v\r\nX-B: w"}; return s }(), "control character"},
		{"header empty", func() MCPServer { s := web(); s.Headers = SecretMap{"X-A": ""}; return s }(), "empty value"},
		{"header case dup", func() MCPServer { s := web(); s.Headers = SecretMap{"X-A": "1", "x-a": "2"}; return s }(), "differ only in case"},
		{"reserved header", func() MCPServer { s := web(); s.Headers = SecretMap{"mcp-session-id": "1"}; return s }(), "set by the MCP transport"},
		{"command on http", func() MCPServer { s := web(); s.Command = "x"; return s }(), "no command"},
		{"timeout", func() MCPServer { s := web(); s.ReadTimeoutSeconds = 0; return s }(), "read timeout 0: must be 5-300"},
		{"transport", func() MCPServer { s := web(); s.Transport = "ws"; return s }(), "transport \"ws\""},
		{"builtin", func() MCPServer { s := web(); s.Transport = TransportBuiltin; return s }(), "built-in"},
	}
	before := mcpGen(t, db)
	for _, c := range cases {
		_, err := db.InsertServer(ctx, c.s)
		if !IsValidation(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a validation error with %q", c.why, err, c.want)
		}
	}
	if mcpGen(t, db) != before {
		t.Error("refused inserts moved the generation")
	}
	for _, ok := range []string{"a", "A-b_c-9", strings.Repeat("z", 128), "9lives", "x-"} {
		s := base()
		s.Name = ok
		if _, err := db.InsertServer(ctx, s); err != nil {
			t.Errorf("name %q refused: %v", ok, err)
		}
	}
}

func TestMCPServersGenerationMovesOnEveryConfigChange(t *testing.T) {
	db := openTest(t, "")
	trust0, _ := db.Generation()
	g := mcpGen(t, db)
	step := func(what string, moved bool) {
		t.Helper()
		n := mcpGen(t, db)
		if moved && n <= g {
			t.Errorf("%s: generation stayed %d", what, n)
		}
		if !moved && n != g {
			t.Errorf("%s: generation moved %d -> %d", what, g, n)
		}
		g = n
	}
	s := mustInsert(t, db, NewStdioServer("a", "node", nil))
	step("insert", true)
	d := "x"
	db.UpdateServer(ctx, s.ID, MCPServerPatch{Description: &d})
	step("update description", true)
	env := SecretMap{"K": "v"}
	db.UpdateServer(ctx, s.ID, MCPServerPatch{Env: &env})
	step("update env", true)
	db.SetServerEnabled(ctx, s.ID, false)
	step("disable", true)
	db.SetServerEnabled(ctx, s.ID, true)
	step("enable", true)
	if err := db.RecordServerStatus(ctx, s.ID, ServerStatus{Status: StatusConnected, ConnectedAt: time.Now(), ToolCount: 3}); err != nil {
		t.Fatal(err)
	}
	step("status", false)
	if err := db.ReplaceServerTools(ctx, s.ID, []MCPTool{{Name: "t"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	step("tools cache", false)
	db.DeleteServer(ctx, s.ID)
	step("delete", true)
	if trust1, _ := db.Generation(); trust1 != trust0 {
		t.Errorf("MCP server changes moved the trust registry's generation %d -> %d", trust0, trust1)
	}
}

func TestRecordStatusAndToolsCache(t *testing.T) {
	db := openTest(t, "")
	s := mustInsert(t, db, NewHTTPServer("web", TransportSSE, "http://127.0.0.1:8080/sse"))
	at := time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)
	if err := db.RecordServerStatus(ctx, s.ID, ServerStatus{Status: StatusConnected, ConnectedAt: at, ToolCount: 2}); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordServerStatus(ctx, s.ID, ServerStatus{Status: StatusError, Error: strings.Repeat("é", 5000), ToolCount: -1}); err != nil {
		t.Fatal(err)
	}
	got, _ := db.MCPServer(ctx, s.ID)
	if got.LastStatus != StatusError || got.LastConnectedAt != "2026-07-01T10:00:00.000Z" || got.ToolCount != 2 || len(got.LastError) > maxLastError || !strings.HasSuffix(got.LastError, "...") {
		t.Errorf("status: %s %s %d len(err)=%d", got.LastStatus, got.LastConnectedAt, got.ToolCount, len(got.LastError))
	}
	if err := db.RecordServerStatus(ctx, s.ID, ServerStatus{Status: "weird"}); !IsValidation(err) {
		t.Errorf("unknown status: %v", err)
	}
	if err := db.RecordServerStatus(ctx, 9999, ServerStatus{Status: StatusError}); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("status of a deleted server: %v", err)
	}

	tools := []MCPTool{
		{Name: "echo", Description: "Echoes", InputSchema: json.RawMessage(`{"type": "object", "properties": {"m": {"type":"string"}}}`)},
		{Name: "add"},
	}
	if err := db.ReplaceServerTools(ctx, s.ID, tools, at); err != nil {
		t.Fatal(err)
	}
	list, _ := db.MCPTools(ctx, s.ID)
	if len(list) != 2 || list[0].Name != "add" || string(list[0].InputSchema) != "{}" || list[1].Server != "web" ||
		string(list[1].InputSchema) != `{"type":"object","properties":{"m":{"type":"string"}}}` || list[1].LastSeenAt != "2026-07-01T10:00:00.000Z" {
		t.Errorf("cache: %+v", list)
	}
	if got, _ := db.MCPServer(ctx, s.ID); got.ToolCount != 2 {
		t.Errorf("tool_count %d after the cache holds 2", got.ToolCount)
	}
	// Bad input leaves the cache as it was.
	for _, bad := range [][]MCPTool{
		{{Name: "x"}, {Name: "x"}},
		{{Name: ""}},
		{{Name: "y", InputSchema: json.RawMessage(`[1]`)}},
	} {
		if err := db.ReplaceServerTools(ctx, s.ID, bad, at); !IsValidation(err) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if list, _ := db.MCPTools(ctx, s.ID); len(list) != 2 {
		t.Errorf("a refused replace changed the cache: %d tools", len(list))
	}
	if err := db.ReplaceServerTools(ctx, s.ID, nil, at); err != nil {
		t.Fatal(err)
	}
	if list, _ := db.MCPTools(ctx, 0); len(list) != 0 {
		t.Errorf("empty replace left %d", len(list))
	}
}

// RecordServerConnected writes the status and the cache together, or,
// for bad input, neither.
func TestRecordServerConnected(t *testing.T) {
	db := openTest(t, "")
	s := mustInsert(t, db, NewHTTPServer("web", TransportHTTP, "http://127.0.0.1:8080/mcp"))
	at := time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)
	two := []MCPTool{{Name: "web__a"}, {Name: "web__b"}}
	if err := db.RecordServerConnected(ctx, s.ID, ServerStatus{Status: StatusConnected, ConnectedAt: at, ToolCount: 99}, two, at); err != nil {
		t.Fatal(err)
	}
	got, _ := db.MCPServer(ctx, s.ID)
	list, _ := db.MCPTools(ctx, s.ID)
	if got.LastStatus != StatusConnected || got.ToolCount != 2 || len(list) != 2 || got.LastConnectedAt != "2026-07-01T10:00:00.000Z" {
		t.Errorf("after connecting: %s, tool_count %d, %d cached, at %s", got.LastStatus, got.ToolCount, len(list), got.LastConnectedAt)
	}
	for _, c := range []struct {
		st    ServerStatus
		tools []MCPTool
	}{
		{ServerStatus{Status: StatusConnected}, []MCPTool{{Name: "x"}, {Name: "x"}}},
		{ServerStatus{Status: StatusConnected}, []MCPTool{{Name: "y", InputSchema: json.RawMessage(`[1]`)}}},
		{ServerStatus{Status: "weird"}, []MCPTool{{Name: "z"}}},
	} {
		if err := db.RecordServerConnected(ctx, s.ID, c.st, c.tools, at.Add(time.Hour)); !IsValidation(err) {
			t.Errorf("%+v %+v: %v, want a validation error", c.st, c.tools, err)
		}
	}
	if err := db.RecordServerConnected(ctx, 9999, ServerStatus{Status: StatusConnected}, two, at); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("a deleted server: %v", err)
	}
	got, _ = db.MCPServer(ctx, s.ID)
	list, _ = db.MCPTools(ctx, s.ID)
	if got.ToolCount != 2 || len(list) != 2 || list[0].LastSeenAt != "2026-07-01T10:00:00.000Z" {
		t.Errorf("refused writes changed the row: tool_count %d, cache %+v", got.ToolCount, list)
	}
}

// A literal secret in env, a header, the URL's query or the last error
// reaches no output: fmt with any verb, JSON (value, pointer, slice),
// slog's text and JSON handlers, View.
func TestMCPServerOutputNeverShowsLiterals(t *testing.T) {
	db := openTest(t, "")
	const (
		envSecret = "ghp_EnvSecretValue0123456789abcdef"
		hdrSecret = "sk-HeaderSecret0123456789abcdefXYZ"
		qrySecret = "QuerySecretValue42"
		short     = "hunter2"
	)
	st := NewStdioServer("gh", "npx", []string{"-y", "server-github"})
	st.Env = SecretMap{"GITHUB_TOKEN": envSecret, "PW": short, "REF": "${GITHUB_TOKEN}", "MIX": "pre" + short + "${X}"}
	a := mustInsert(t, db, st)
	web := NewHTTPServer("web", TransportHTTP, "https://h.example/mcp?api_key="+qrySecret+"&v=1")
	web.Headers = SecretMap{"Authorization": "Bearer " + hdrSecret, "X-Ref": "Bearer ${API_TOKEN}", "X-Short": short}
	b := mustInsert(t, db, web)
	db.RecordServerStatus(ctx, b.ID, ServerStatus{Status: StatusError, Error: "401 for Authorization: Bearer " + hdrSecret})
	a, _ = db.MCPServer(ctx, a.ID)
	b, _ = db.MCPServer(ctx, b.ID)
	if a.Env["GITHUB_TOKEN"] != envSecret || b.Headers["Authorization"] != "Bearer "+hdrSecret {
		t.Fatal("the daemon must get the stored literal values")
	}

	var outputs []string
	for _, s := range []MCPServer{a, b} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			outputs = append(outputs, fmt.Sprintf(verb, s), fmt.Sprintf(verb, &s), fmt.Sprintf(verb, s.Env), fmt.Sprintf(verb, s.Headers))
		}
		patch := MCPServerPatch{Env: &s.Env, Headers: &s.Headers}
		outputs = append(outputs, fmt.Sprintf("%v", patch), fmt.Sprintf("%+v", patch), fmt.Sprintf("%#v", &patch))
		for _, v := range []any{s, &s, []MCPServer{s}, s.View(), s.Env, s.Headers, patch} {
			j, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			outputs = append(outputs, string(j))
		}
		for _, h := range []func(*bytes.Buffer) slog.Handler{
			func(w *bytes.Buffer) slog.Handler { return slog.NewTextHandler(w, nil) },
			func(w *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(w, nil) },
		} {
			var buf bytes.Buffer
			slog.New(h(&buf)).Info("server", "s", s, "env", s.Env, "headers", s.Headers)
			outputs = append(outputs, buf.String())
		}
	}
	for _, out := range outputs {
		for _, secret := range []string{envSecret, hdrSecret, qrySecret, short, "EnvSecret", "HeaderSecret"} {
			if strings.Contains(out, secret) {
				t.Errorf("output shows %q: %s", secret, out)
			}
		}
	}
	va, vb := a.View(), b.View()
	want := map[string]string{
		va.Env["GITHUB_TOKEN"]:      "ghp****cdef",
		va.Env["PW"]:                "****",
		va.Env["REF"]:               "${GITHUB_TOKEN}",
		va.Env["MIX"]:               "****${X}",
		vb.Headers["X-Ref"]:         "Bearer ${API_TOKEN}",
		vb.Headers["X-Short"]:       "****",
		vb.URL:                      "https://h.example/mcp?api_key=****&v=****",
		vb.Headers["Authorization"]: "Bea****fXYZ",
	}
	for got, w := range want {
		if got != w {
			t.Errorf("masked %q, want %q", got, w)
		}
	}
	if !strings.Contains(vb.LastError, "401") {
		t.Errorf("last error lost its non-secret text: %q", vb.LastError)
	}
}

// A change made through another handle (as `clawd mcp add` in another
// process) reaches a watcher without restart, and status writes do not
// wake it.
func TestWatchMCPServersSeesOtherProcessChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	daemon := openTest(t, path)
	cli, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan []MCPServer, 16)
	done := make(chan error, 1)
	go func() { done <- daemon.WatchMCPServers(ctx, 20*time.Millisecond, func(l []MCPServer) { got <- l }) }()
	next := func(what string) []MCPServer {
		t.Helper()
		select {
		case l := <-got:
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the watcher did not report within 10 s", what)
		}
		return nil
	}
	if l := next("start"); len(l) != 1 {
		t.Fatalf("first report: %d rows", len(l))
	}
	s, err := cli.InsertServer(context.Background(), NewStdioServer("new", "node", nil))
	if err != nil {
		t.Fatal(err)
	}
	if l := next("add"); len(l) != 2 || l[1].Name != "new" {
		t.Fatalf("after add: %+v", l)
	}
	if err := daemon.RecordServerStatus(context.Background(), s.ID, ServerStatus{Status: StatusConnected, ToolCount: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-got:
		t.Errorf("the daemon's own status write woke the watcher: %+v", l)
	case <-time.After(200 * time.Millisecond): // 10 poll periods
	}
	cli.SetServerEnabled(context.Background(), s.ID, false)
	if l := next("disable"); l[1].Enabled {
		t.Fatalf("after disable: %+v", l[1].View())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch ended with %v", err)
	}
}

// TestEveryStatusFitsTheTable: the Go list of statuses and the table's
// CHECK constraint agree, so the daemon never has a status write refused.
func TestEveryStatusFitsTheTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	s := mustInsert(t, db, NewStdioServer("fs", "/bin/true", nil))
	for _, st := range Statuses {
		if err := db.RecordServerStatus(ctx, s.ID, ServerStatus{Status: st, ToolCount: -1}); err != nil {
			t.Errorf("status %s: %v", st, err)
		}
		if got, _ := db.MCPServer(ctx, s.ID); got.LastStatus != st {
			t.Errorf("status %s stored as %s", st, got.LastStatus)
		}
	}
	if _, err := raw(t, path).Exec(`UPDATE cd_mcp_server SET last_status = 'weird' WHERE id = ?`, s.ID); err == nil {
		t.Error("the table accepted a status outside the list")
	}
}

// TestMCPServerConfirm: each change calls its confirms inside the
// transaction with the rows before and after, and a confirm's error rolls
// the change back and is returned.
func TestMCPServerConfirm(t *testing.T) {
	db := openTest(t, "")
	ctx := context.Background()
	refuse := errors.New("no audit row")
	no := func(before, after MCPServer) error { return refuse }
	if _, err := db.InsertServer(ctx, NewStdioServer("a", "/bin/true", nil), no); !errors.Is(err, refuse) {
		t.Fatalf("insert: %v", err)
	}
	if _, err := db.MCPServerByName(ctx, "a"); !errors.Is(err, ErrServerNotFound) {
		t.Fatalf("a refused insert was stored: %v", err)
	}
	var seen [][2]MCPServer
	see := func(before, after MCPServer) error { seen = append(seen, [2]MCPServer{before, after}); return nil }
	s, err := db.InsertServer(ctx, NewStdioServer("a", "/bin/true", nil), see)
	if err != nil || len(seen) != 1 || seen[0][0].ID != 0 || seen[0][1].ID != s.ID || seen[0][1].Name != "a" {
		t.Fatalf("insert: %v %+v", err, seen)
	}
	desc := "changed"
	if _, err := db.UpdateServer(ctx, s.ID, MCPServerPatch{Description: &desc}, no); !errors.Is(err, refuse) {
		t.Fatalf("update: %v", err)
	}
	if _, err := db.SetServerEnabled(ctx, s.ID, false, no); !errors.Is(err, refuse) {
		t.Fatalf("disable: %v", err)
	}
	if err := db.DeleteServer(ctx, s.ID, no); !errors.Is(err, refuse) {
		t.Fatalf("delete: %v", err)
	}
	got, err := db.MCPServer(ctx, s.ID)
	if err != nil || got.Description != "" || !got.Enabled {
		t.Fatalf("refused changes were stored: %v %+v", err, got)
	}
	seen = nil
	if _, err := db.UpdateServer(ctx, s.ID, MCPServerPatch{Description: &desc}, see); err != nil {
		t.Fatal(err)
	}
	if changed, err := db.SetServerEnabled(ctx, s.ID, true, no); err != nil || changed {
		t.Fatalf("a toggle that changes nothing runs no confirm: %v %v", changed, err)
	}
	if err := db.DeleteServer(ctx, s.ID, see); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0][0].Description != "" || seen[0][1].Description != "changed" ||
		seen[1][0].Name != "a" || seen[1][1].ID != 0 {
		t.Fatalf("confirms saw %+v", seen)
	}
}

// lastError quoting the server's own URL (a connection error) shows it as
// the url field does: a query value the free-text masker does not know is
// masked too.
func TestViewMasksTheURLInLastError(t *testing.T) {
	const query = "supersecretquery0123"
	u := "http://127.0.0.1:1/mcp?key=" + query
	s := MCPServer{Transport: TransportHTTP, URL: u, LastError: `Post "` + u + `": dial tcp 127.0.0.1:1: connect: connection refused`}
	if v := s.View(); strings.Contains(v.LastError, query) || !strings.Contains(v.LastError, "127.0.0.1:1/mcp?key=") {
		t.Fatalf("lastError %q", v.LastError)
	}
}

// A URL that does not parse is named masked, and so is what the parser
// says about it: a password holding a '/' is read as a port or a host,
// which the parser's message quotes.
func TestValidateURLNeverQuotesAPassword(t *testing.T) {
	for _, u := range []string{
		"https://u:hunter2xyz/abc@h/mcp",
		"https://u:hunter2xyz/abc@h:1/mcp",
		"https://u:a b hunter2xyz@h/mcp",
		"https://u:hunter2xyz/a%zz@h/mcp",
	} {
		if err := ValidateURL(u); err == nil || strings.Contains(err.Error(), "hunter2xyz") {
			t.Errorf("ValidateURL(%q) = %v", u, err)
		}
	}
}
