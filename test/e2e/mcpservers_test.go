package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/test/clawdtest"
)

// mcpServerKeys are the members of one server in `clawd mcp list --json`,
// `show --json` and `add --json`: the contract scripts rely on.
var mcpServerKeys = []string{"args", "builtin", "command", "connect_timeout_seconds", "created_at", "cwd", "description", "enabled",
	"env", "headers", "id", "identity_arg", "identity_audience", "identity_mode", "last_connected_at", "last_error", "last_status", "name", "read_timeout_seconds", "tool_count",
	"transport", "updated_at", "url"}

func keysOf(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}

func mustJSON[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return v
}

// listNames is the server names `clawd mcp list --json` shows.
func listNames(t *testing.T, e *clawdtest.Env) []string {
	t.Helper()
	var names []string
	for _, s := range mustJSON[[]map[string]any](t, e.MustRun("mcp", "list", "--json")) {
		names = append(names, s["name"].(string))
	}
	return names
}

func TestMCPServersStdioLifecycle(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	if got := listNames(t, e); !slices.Equal(got, []string{"clawd"}) {
		t.Fatalf("a new database lists %v, want the built-in server clawd", got)
	}
	out, errs, code := e.Run("mcp", "add", "fs", "--stdio", "--cwd", e.WS, "--env", "TOKEN=${GITHUB_TOKEN}", "--env", "PASS=pa$$word", "--read-timeout", "120",
		"--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp/with space", "it's", "a\x1b[31mred", "")
	if code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	// The exact command, every argument, shell-quoted and untruncated; the
	// escape byte shown, not sent to the terminal.
	wantCmd := `npx -y @modelcontextprotocol/server-filesystem '/tmp/with space' 'it'\''s' $'a\x1b[31mred' ''`
	if !strings.Contains(out, "command:        "+wantCmd+"\n") || strings.Contains(out, "\x1b") {
		t.Errorf("add does not print the stored command exactly:\n%s", out)
	}
	if !strings.Contains(out, "TOKEN=${GITHUB_TOKEN}") || !strings.Contains(out, "cwd:            "+e.WS) || !strings.Contains(out, "read 120 s") {
		t.Errorf("add output:\n%s", out)
	}
	if !strings.Contains(errs, "GITHUB_TOKEN not set in this shell") {
		t.Errorf("no note about the unset variable: %q", errs)
	}
	if strings.Contains(errs, "word") {
		t.Errorf("pa$$word (a literal '$') read as a reference to word: %q", errs)
	}

	show := mustJSON[map[string]any](t, e.MustRun("mcp", "show", "FS", "--json"))
	// show adds what is approved for the server (stdio; null otherwise).
	if got, want := keysOf(show), append([]string{"approval"}, mcpServerKeys...); !slices.Equal(got, want) {
		t.Errorf("show --json keys %v, want %v", got, want)
	}
	args, _ := json.Marshal(show["args"])
	if show["name"] != "fs" || show["transport"] != "stdio" || show["command"] != "npx" || show["read_timeout_seconds"] != 120.0 ||
		show["connect_timeout_seconds"] != 30.0 || show["enabled"] != true || show["builtin"] != false || show["last_status"] != "disconnected" ||
		string(args) != `["-y","@modelcontextprotocol/server-filesystem","/tmp/with space","it's","a\u001b[31mred",""]` {
		t.Errorf("show --json: %v", show)
	}

	list := e.MustRun("mcp", "list")
	if !strings.Contains(list, "fs ") || !strings.Contains(list, "stdio") || !strings.Contains(list, "disconnected") {
		t.Errorf("list:\n%s", list)
	}

	if out := e.MustRun("mcp", "disable", "fs"); !strings.Contains(out, "disabled MCP server fs") {
		t.Errorf("disable: %s", out)
	}
	again := mustJSON[map[string]any](t, e.MustRun("mcp", "disable", "fs", "--json"))
	if again["changed"] != false || again["server"].(map[string]any)["enabled"] != false {
		t.Errorf("disable twice --json: %v", again)
	}
	if out := e.MustRun("mcp", "enable", "fs"); !strings.Contains(out, "enabled MCP server fs") {
		t.Errorf("enable: %s", out)
	}

	rm := mustJSON[map[string]any](t, e.MustRun("mcp", "rm", "fs", "--json"))
	if rm["removed"] != true || rm["server"].(map[string]any)["name"] != "fs" {
		t.Errorf("rm --json: %v", rm)
	}
	if got := listNames(t, e); !slices.Equal(got, []string{"clawd"}) {
		t.Errorf("after rm: %v", got)
	}
	_, errs, code = e.Run("mcp", "rm", "fs")
	if code != 1 || !strings.Contains(errs, "no such MCP server: fs") {
		t.Errorf("rm twice: exit %d %q", code, errs)
	}
}

func TestMCPServersHTTPAndSSE(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	add := mustJSON[map[string]any](t, e.MustRun("mcp", "add", "remote", "--http", "https://mcp.example.com/mcp",
		"--header", "Authorization: Bearer ${API_TOKEN}", "--header", "X-Team:eng", "--connect-timeout", "5", "--disabled", "--json"))
	if got := keysOf(add); !slices.Equal(got, mcpServerKeys) {
		t.Errorf("add --json keys %v", got)
	}
	h := add["headers"].(map[string]any)
	if add["transport"] != "http" || add["url"] != "https://mcp.example.com/mcp" || add["enabled"] != false || add["connect_timeout_seconds"] != 5.0 ||
		h["Authorization"] != "Bearer ${API_TOKEN}" || h["X-Team"] != "****" {
		t.Errorf("add --json: %v", add)
	}
	out := e.MustRun("mcp", "add", "legacy", "--http", "http://127.0.0.1:8931/sse", "--sse")
	if !strings.Contains(out, "sse (legacy HTTP+SSE)") || !strings.Contains(out, "http://127.0.0.1:8931/sse") {
		t.Errorf("add --sse:\n%s", out)
	}
	if got := listNames(t, e); !slices.Equal(got, []string{"clawd", "legacy", "remote"}) {
		t.Errorf("list: %v", got)
	}
}

// Every usage mistake exits 2 with a message naming it, and stores
// nothing.
func TestMCPAddValidationErrors(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.MustRun("mcp", "add", "taken", "--stdio", "--", "true")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "add"}, "needs a NAME"},
		{[]string{"mcp", "add", "x"}, "needs --stdio or --http"},
		{[]string{"mcp", "add", "x", "--stdio", "--http", "https://h/"}, "choose one of --stdio and --http"},
		{[]string{"mcp", "add", "x", "--stdio"}, "--stdio needs the command after --"},
		{[]string{"mcp", "add", "x", "--stdio", "node", "server.js"}, "put the command after --: clawd mcp add x --stdio -- node server.js"},
		{[]string{"mcp", "add", "x", "--stdio", "npx", "-y", "pkg"}, "go after --"},
		{[]string{"mcp", "add", "x", "--stdio", "--"}, "needs a command after --"},
		{[]string{"mcp", "add", "x", "y", "--stdio", "--", "node"}, `unexpected argument "y" before --`},
		{[]string{"mcp", "add", "", "--stdio", "--", "node"}, "needs a NAME"},
		{[]string{"mcp", "add", strings.Repeat("n", 129), "--stdio", "--", "node"}, "1-128"},
		{[]string{"mcp", "add", "my.server", "--stdio", "--", "node"}, "'.' is not allowed"},
		{[]string{"mcp", "add", "my server", "--stdio", "--", "node"}, "' ' is not allowed"},
		{[]string{"mcp", "add", "a__b", "--stdio", "--", "node"}, "NAME__TOOL"},
		{[]string{"mcp", "add", "ab_", "--stdio", "--", "node"}, "NAME__TOOL"},
		{[]string{"mcp", "add", "x", "--http", "ftp://h/x"}, "http or https"},
		{[]string{"mcp", "add", "x", "--http", "https://"}, "no host"},
		{[]string{"mcp", "add", "x", "--http", ""}, "URL is empty"},
		{[]string{"mcp", "add", "x", "--http", "https://u:pw@h/"}, "user:password@"},
		{[]string{"mcp", "add", "x", "--http", "https://h/", "--", "node"}, "takes no command"},
		{[]string{"mcp", "add", "x", "--sse", "https://h/"}, "--http https://h/; --sse takes no value"},
		{[]string{"mcp", "add", "x", "--http", "https://h/", "--header", "NoColon"}, "expected 'Name: value'"},
		{[]string{"mcp", "add", "x", "--http", "https://h/", "--header", "Bad Name: v"}, "header name"},
		{[]string{"mcp", "add", "x", "--http", "https://h/", "--header", "X-A:"}, "empty value"},
		{[]string{"mcp", "add", "x", "--http", "https://h/", "--header", "X-A: 1", "--header", "x-a: 2"}, "given twice"},
		{[]string{"mcp", "add", "x", "--http", "https://h/", "--header", "Mcp-Session-Id: 1"}, "set by the MCP transport"},
		{[]string{"mcp", "add", "x", "--http", "https://h/", "--header", "X-A: ${UNCLOSED"}, "unterminated ${"},
		{[]string{"mcp", "add", "x", "--http", "https://h/", "--env", "A=b"}, "--env is for --stdio servers"},
		{[]string{"mcp", "add", "x", "--http", "https://h/", "--cwd", "/"}, "--cwd is for --stdio servers"},
		{[]string{"mcp", "add", "x", "--stdio", "--header", "A: b", "--", "node"}, "--header is for --http servers"},
		{[]string{"mcp", "add", "x", "--stdio", "--sse", "--", "node"}, "--sse is for --http servers"},
		{[]string{"mcp", "add", "x", "--stdio", "--env", "NOVALUE", "--", "node"}, "expected K=V"},
		{[]string{"mcp", "add", "x", "--stdio", "--env", "1A=b", "--", "node"}, "environment variable name"},
		{[]string{"mcp", "add", "x", "--stdio", "--env", "A=1", "--env", "A=2", "--", "node"}, "--env A is given twice"},
		{[]string{"mcp", "add", "x", "--stdio", "--env", "CLAWD_TOKEN=x", "--", "node"}, "clawd's own"},
		{[]string{"mcp", "add", "x", "--stdio", "--env", "T=${CLAWDE_TOKEN}", "--", "node"}, "clawd's own variables"},
		{[]string{"mcp", "add", "x", "--stdio", "--cwd", "/no/such/dir", "--", "node"}, "no such directory"},
		{[]string{"mcp", "add", "x", "--stdio", "--connect-timeout", "4", "--", "node"}, "--connect-timeout 4: must be 5-300 seconds"},
		{[]string{"mcp", "add", "x", "--stdio", "--read-timeout", "301", "--", "node"}, "--read-timeout 301: must be 5-300 seconds"},
		{[]string{"mcp", "add", "x", "--stdio", "--read-timeout", "soon", "--", "node"}, `--read-timeout "soon": expected a whole number`},
		{[]string{"mcp", "show"}, "needs the server's NAME"},
		{[]string{"mcp", "show", "a", "b"}, "unexpected argument"},
		{[]string{"mcp", "show", "bad/name"}, "'/' is not allowed"},
		{[]string{"mcp", "rm", "clawd"}, "clawd is the built-in server"},
		{[]string{"mcp", "disable", "clawd"}, "cannot be removed, disabled or changed"},
		{[]string{"mcp", "tools", "a", "b"}, "at most one NAME"},
		{[]string{"mcp", "list", "x"}, "unexpected argument"},
		{[]string{"mcp", "approve"}, "usage: clawd mcp approve NAME [TOOL]"},
		{[]string{"mcp", "approve", "a", "b", "c"}, "usage: clawd mcp approve NAME [TOOL]"},
		{[]string{"mcp", "approve", "taken", "--sha256", "zz"}, "--sha256"},
		{[]string{"mcp", "approve", "taken", "--sha256", strings.Repeat("a", 64)}, "name the TOOL too"},
		{[]string{"mcp", "approve", "clawd"}, "clawd's own tools: they need no approval"},
		{[]string{"mcp", "diff"}, "usage: clawd mcp diff NAME [TOOL]"},
		{[]string{"mcp", "diff", "clawd"}, "compiled in and need no approval"},
		{[]string{"mcp"}, "mcp needs a subcommand: add, allow, allowlist, approve, diff, disable, disallow, enable, identity-key, list, logs, refresh, rm, set, show, test, tools"},
	}
	for _, c := range cases {
		_, errs, code := e.Run(c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("clawd %q: exit %d, stderr %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
	// Well-formed commands that the stored state refuses are runtime
	// failures (exit 1), like a server that does not exist.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "add", "TAKEN", "--stdio", "--", "node"}, "of that name exists: taken (names are compared without regard to case)"},
		{[]string{"mcp", "add", "clawd", "--stdio", "--", "node"}, "of that name exists: clawd"},
		{[]string{"mcp", "approve", "taken"}, "has not seen the tools of taken yet"},
		{[]string{"mcp", "diff", "taken", "nosuchtool"}, `taken has no tool "nosuchtool"`},
	} {
		_, errs, code := e.Run(c.args...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("clawd %q: exit %d, stderr %q; want exit 1 and %q", c.args, code, errs, c.want)
		}
	}
	if got := listNames(t, e); !slices.Equal(got, []string{"clawd", "taken"}) {
		t.Errorf("refused commands stored something: %v", got)
	}
	for _, args := range [][]string{{"mcp", "show", "nope"}, {"mcp", "rm", "nope"}, {"mcp", "enable", "nope"}, {"mcp", "tools", "nope"},
		{"mcp", "approve", "nope"}, {"mcp", "diff", "nope"}} {
		_, errs, code := e.Run(args...)
		if code != 1 || !strings.Contains(errs, "no such MCP server: nope") {
			t.Errorf("clawd %q: exit %d %q; want exit 1", args, code, errs)
		}
	}
}

// A literal secret given to `mcp add` is stored (the daemon needs it) but
// no command prints it, in text or JSON, on stdout or stderr.
func TestMCPServerSecretsNeverPrinted(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	const envSecret, hdrSecret, querySecret = "ghp_Abcdefghij0123456789KLMNOPqrstuv", "sk-proj-Secret0123456789abcdefghijk", "QueryKey0042xyz"
	var outputs []string
	run := func(args ...string) {
		t.Helper()
		out, errs, code := e.Run(args...)
		if code != 0 {
			t.Fatalf("clawd %q: exit %d: %s", args, code, errs)
		}
		outputs = append(outputs, out, errs)
	}
	run("mcp", "add", "gh", "--stdio", "--env", "GITHUB_TOKEN="+envSecret, "--", "github-mcp-server", "stdio")
	run("mcp", "add", "api", "--http", "https://api.example.com/mcp?key="+querySecret, "--header", "Authorization: Bearer "+hdrSecret, "--json")
	for _, name := range []string{"gh", "api"} {
		for _, j := range [][]string{nil, {"--json"}} {
			run(append([]string{"mcp", "show", name}, j...)...)
			run(append([]string{"mcp", "disable", name}, j...)...)
			run(append([]string{"mcp", "enable", name}, j...)...)
			run(append([]string{"mcp", "tools", name}, j...)...)
		}
	}
	for _, j := range [][]string{nil, {"--json"}} {
		run(append([]string{"mcp", "list"}, j...)...)
		run(append([]string{"mcp", "tools"}, j...)...)
	}
	run("mcp", "rm", "gh")
	run("mcp", "rm", "api", "--json")
	for _, out := range outputs {
		for _, s := range []string{envSecret, hdrSecret, querySecret, "Secret0123456789"} {
			if strings.Contains(out, s) {
				t.Errorf("output shows a secret:\n%s", out)
			}
		}
	}
	if st, err := os.Stat(e.DBFile()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("database mode: %v %v; the literals are in it, it must be 0600", st.Mode(), err)
	}
}

func TestMCPBuiltinServerAndToolsCache(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	show := mustJSON[map[string]any](t, e.MustRun("mcp", "show", "clawd", "--json"))
	if show["builtin"] != true || show["transport"] != "builtin" || show["tool_count"] != 5.0 {
		t.Errorf("built-in row: %v", show)
	}
	var names []string
	for _, tl := range mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "clawd", "--json")) {
		names = append(names, tl["name"].(string))
		if _, ok := tl["input_schema"].(map[string]any); !ok {
			t.Errorf("tool %v has no input_schema object", tl["name"])
		}
	}
	if !slices.Equal(names, []string{"bash", "read_file", "write_file", "list_dir", "search"}) {
		t.Errorf("built-in tools %v", names)
	}

	// What the daemon will write: status and the tools cache, through the
	// store, read back by the CLI. An upstream's hostile description
	// (terminal escapes, newlines) is shown escaped.
	e.MustRun("mcp", "add", "every", "--stdio", "--", "npx", "-y", "@modelcontextprotocol/server-everything")
	db, err := store.Open(e.DBFile(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := db.MCPServerByName(context.Background(), "every")
	if err != nil {
		t.Fatal(err)
	}
	seen := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	err = db.ReplaceServerTools(context.Background(), s.ID, []store.MCPTool{
		{Name: "echo", Description: "Echoes back\x1b]0;pwned\x07 the input\nsecond line", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
		{Name: "add", Description: "Adds two numbers"},
	}, seen)
	if err == nil {
		err = db.RecordServerStatus(context.Background(), s.ID, store.ServerStatus{Status: store.StatusError, Error: "initialize: timed out\x1b[2J after 30s", ConnectedAt: seen, ToolCount: -1})
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	text := e.MustRun("mcp", "tools", "every")
	if strings.ContainsAny(text, "\x1b\x07") || !strings.Contains(text, `Echoes back\x1b]0;pwned\x07 the input`) || strings.Contains(text, "second line") {
		t.Errorf("tools text output:\n%q", text)
	}
	tools := mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "every", "--json"))
	if len(tools) != 2 || tools[0]["name"] != "add" || tools[1]["server"] != "every" || tools[1]["last_seen_at"] != "2026-07-01T12:00:00.000Z" ||
		tools[1]["input_schema"].(map[string]any)["type"] != "object" {
		t.Errorf("tools --json: %v", tools)
	}
	all := mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "--json"))
	if len(all) != 7 {
		t.Errorf("mcp tools lists %d tools, want 5 built-in + 2 cached", len(all))
	}
	list := e.MustRun("mcp", "list")
	if !strings.Contains(list, "error") || !strings.Contains(list, "2026-07-01T12:00:00.000Z") || !strings.Contains(list, `timed out\x1b[2J after`) || strings.Contains(list, "\x1b") {
		t.Errorf("list:\n%q", list)
	}
	row := mustJSON[[]map[string]any](t, e.MustRun("mcp", "list", "--json"))[1]
	if row["tool_count"] != 2.0 || row["last_status"] != "error" || row["last_connected_at"] != "2026-07-01T12:00:00.000Z" {
		t.Errorf("list --json row: %v", row)
	}
	// rm drops the cache with the server.
	e.MustRun("mcp", "rm", "every")
	if all := mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "--json")); len(all) != 5 {
		t.Errorf("after rm, %d tools", len(all))
	}
	// The supply-chain allowlist commands live in the same tree and work.
	sum := strings.Repeat("ab", 32)
	e.MustRun("mcp", "allow", "--server", "every", "--sha256", sum)
	if out := e.MustRun("mcp", "allowlist"); !strings.Contains(out, sum) {
		t.Errorf("allowlist: %s", out)
	}
}

// TestMCPAllowAndDisallowAreAudited: approving a server's executable and
// withdrawing it are both on record, as the CLI's own rows (local:cli,
// step upstream): an Allow with the hash, then a Deny.
func TestMCPAllowAndDisallowAreAudited(t *testing.T) {
	e := newEnv(t)
	e.Init()
	sum := strings.Repeat("ab", 32)
	e.MustRun("mcp", "add", "tool", "--stdio", "--", "/bin/true")
	e.MustRun("mcp", "allow", "--server", "tool", "--sha256", sum)
	e.MustRun("mcp", "disallow", "--server", "tool")
	rows := mustJSON[[]map[string]any](t, e.MustRun("audit", "--server", "tool", "--limit", "0", "--json"))
	var got []string
	for _, r := range rows {
		if r["entity_id"] == "local:cli" && r["tool_id"] == "mcp:tool" && r["step"] == "upstream" {
			got = append(got, r["result"].(string)+" "+r["reason"].(string))
		}
	}
	want := []string{"Allow approve: sha256 " + sum, "Allow configure: added stdio server running /bin/true", "Deny approve: withdrawn"}
	slices.Sort(got)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("audit rows %q, want %q", got, want)
	}
}

// TestMCPServerChangesAreAudited: the command line's changes of the server
// table are on record like the REST API's (local:cli, step upstream,
// "configure: ..."), and fail closed: with no audit row possible the
// server is not added and the command says why.
func TestMCPServerChangesAreAudited(t *testing.T) {
	e := newEnv(t)
	e.Init()
	e.MustRun("mcp", "add", "tool", "--stdio", "--env", "API_TOKEN=sk-live-0123456789abcdef", "--", "/bin/true")
	e.MustRun("mcp", "disable", "tool")
	e.MustRun("mcp", "disable", "tool") // already disabled: no change, no row
	e.MustRun("mcp", "enable", "tool")
	e.MustRun("mcp", "rm", "tool")
	rows := mustJSON[[]map[string]any](t, e.MustRun("audit", "--server", "tool", "--limit", "0", "--json"))
	var got []string
	for _, r := range rows {
		if r["entity_id"] == "local:cli" && r["tool_id"] == "mcp:tool" && r["step"] == "upstream" {
			got = append(got, r["result"].(string)+" "+r["reason"].(string)+" "+fmt.Sprint(r["outcome"]))
		}
	}
	want := []string{"Allow configure: added stdio server running /bin/true ok", "Allow configure: disabled ok",
		"Allow configure: enabled ok", "Allow configure: removed ok"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("audit rows %q, want %q", got, want)
	}

	// A file where the audit journal's directory belongs: no row can be
	// written, so nothing is added.
	journal := e.DBFile() + ".audit"
	if err := os.RemoveAll(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(journal, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := e.Run("mcp", "add", "other", "--stdio", "--", "/bin/true")
	if code != 1 || !strings.Contains(stderr, "not made") {
		t.Errorf("mcp add with no audit possible: exit %d, stderr %q; want 1 and the change not made", code, stderr)
	}
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if out := e.MustRun("mcp", "list"); strings.Contains(out, "other") {
		t.Errorf("a server added without its audit row is listed:\n%s", out)
	}
}
