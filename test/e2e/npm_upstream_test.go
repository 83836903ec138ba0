//go:build unix

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

// The gateway against real MCP servers from npm, installed by the test
// setup (clawdtest.NPMUpstreams): @modelcontextprotocol/server-everything
// over stdio and over its Streamable HTTP mode, and
// @modelcontextprotocol/server-filesystem over stdio. Each test drives the
// built clawd with the go-sdk client, as a coding agent would.
//
// Every stdio upstream here is `node /abs/path/dist/index.js`, not `npx -y
// PACKAGE`, and `node` is what gets allowlisted. clawd pins the SHA-256 of
// the executable it starts; for npx that is npx itself, which then
// resolves (and may download) whatever version the registry serves at
// that moment, so the pin would vouch for nothing in particular and the
// test would depend on the network at run time. node with an absolute
// script path runs exactly the installed, pinned package, starts no
// launcher process in between, and is what docs/upstreams.md recommends.
// The hash still covers only node, not the script (docs/upstreams.md).

const (
	everythingPkg = "@modelcontextprotocol/server-everything"
	filesystemPkg = "@modelcontextprotocol/server-filesystem"

	// npmWait bounds the wait for a Node server to connect. One needs
	// about 1 s of CPU to start; on a loaded 2-core machine (CI runs the
	// packages' tests in parallel) that has taken 25 s. The servers are
	// added with --connect-timeout 120 for the same reason.
	npmWait = 90 * time.Second
)

// toolName is what clients accept (docs/upstreams.md, Names).
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// npmScript is the entry point of an npm upstream, installed if needed.
func npmScript(t *testing.T, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("no node on PATH to run %s: %v", pkg, err)
	}
	return filepath.Join(clawdtest.NPMPackage(t, pkg), "dist", "index.js")
}

// nodeHash is the path clawd resolves `node` to (PATH, symlinks) and its
// SHA-256, which is what `clawd mcp allow` pins.
func nodeHash(t *testing.T) (path, sum string) {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("no node on PATH: %v", err)
	}
	if p, err = filepath.EvalSymlinks(p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return p, hex.EncodeToString(h[:])
}

// allowNode approves what server runs (node and the script it is given),
// as a user does with `clawd mcp allow NAME`.
func allowNode(t *testing.T, e *env, server string) {
	t.Helper()
	e.MustRun("mcp", "allow", server, "--yes")
}

// approveTools approves server's tool definitions (`clawd mcp approve`)
// once the daemon has seen them: new upstream tools are offered to no
// client until then.
func approveTools(t *testing.T, e *env, server string) {
	t.Helper()
	deadline := time.Now().Add(npmWait)
	for {
		_, errOut, code := e.Run("mcp", "approve", server, "--yes")
		if code == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("clawd mcp approve %s: %s", server, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// watchTools are client options that subscribe to tools/list_changed. A
// 2026-07-28 go-sdk client keeps a tools list for its TTL (60 s) and
// subscribes to changes only when it has a handler; with one, the
// notification clawd sends when upstream tools are approved or connect
// drops the cached list at once.
func watchTools() *mcp.ClientOptions {
	return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}}
}

// waitSDKTools lists tools through the client until want appears (npmWait
// at most; the daemon applies the table within about a second and connects
// in the background) and returns the whole list.
func waitSDKTools(t *testing.T, cs *mcp.ClientSession, want string) []*mcp.Tool {
	t.Helper()
	deadline := time.Now().Add(npmWait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := cs.ListTools(ctx, nil)
		cancel()
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		for _, tl := range res.Tools {
			if tl.Name == want {
				return res.Tools
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared in tools/list: %v", want, namesOf(res.Tools))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func namesOf(ts []*mcp.Tool) []string {
	var out []string
	for _, tl := range ts {
		out = append(out, tl.Name)
	}
	return out
}

// cachedTool matches tool in `clawd mcp tools SERVER --json`. The daemon
// caches the exposed name (server__tool) while docs/upstreams.md describes
// the upstream's own name; either passes here, since what this test checks
// is that the tool was cached at all.
func cachedTool(server, tool string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["name"] == tool || m["name"] == server+"__"+tool }
}

// waitServerWithin polls `clawd mcp list --json` until the named server's
// row satisfies ok (within at most) and returns it.
func waitServerWithin(t *testing.T, e *clawdtest.Env, within time.Duration, name string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var last map[string]any
		for _, s := range mustJSON[[]map[string]any](t, e.MustRun("mcp", "list", "--json")) {
			if s["name"] == name {
				last = s
			}
		}
		if last != nil && ok(last) {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s never reached the expected state within %v: %v", name, within, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitNoProcess waits until no process's command line mentions marker.
func waitNoProcess(t *testing.T, marker, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for pids := processesWith(marker); len(pids) > 0; pids = processesWith(marker) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: processes %v are still running", what, pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stdinSpy is a node preload module that appends what node reads on stdin
// to the file in $SPY_STDIN_LOG. It wraps stdin's emit rather than adding
// a listener (a listener would start reading before the server listens,
// and the server would miss its first message), so the server runs as it
// would without it; the test uses it to see what clawd sent upstream (the
// cancellation of a call).
const stdinSpy = `import fs from "node:fs";
const log = process.env.SPY_STDIN_LOG;
const stdin = process.stdin;
const emit = stdin.emit;
stdin.emit = function (event, ...args) {
  if (event === "data") fs.appendFileSync(log, args[0]);
  return emit.call(this, event, ...args);
};
`

// TestServerEverythingStdio is the user's path with the reference server:
// add, refused until node is allowlisted (the last error names node and
// gives the allow line), connected, its tools listed as everything__*
// beside clawd's own, and calls through the chain: echo, structuredContent
// and isError exactly as the server sent them, and a long-running call
// cancelled by the client, with the cancellation reaching the server and
// the session still usable. When the client goes, clawd and the server go.
func TestServerEverythingStdio(t *testing.T) {
	script := npmScript(t, everythingPkg)
	nodePath, sum := nodeHash(t)
	e := newEnv(t)
	e.Init()
	spy := filepath.Join(e.Base, "stdin-spy.mjs")
	stdinLog := filepath.Join(e.Base, "everything-stdin.log")
	if err := os.WriteFile(spy, []byte(stdinSpy), 0o644); err != nil {
		t.Fatal(err)
	}

	// The spy is preloaded through NODE_OPTIONS in clawd's own environment,
	// which the server inherits: approval refuses `node --import` (code
	// from outside the pinned script), and so NODE_OPTIONS=--import in the
	// server's env; clawd's own environment is not checked (whoever sets
	// it can load code into clawd itself; docs/upstreams.md).
	e.Extra = append(e.Extra, "NODE_OPTIONS=--import=file://"+spy)
	cs := dialStdio(t, e, dial{era: eras[0], opts: watchTools()})
	e.MustRun("mcp", "add", "everything", "--stdio", "--connect-timeout", "120", "--env", "SPY_STDIN_LOG="+stdinLog,
		"--", "node", script, "stdio")
	row := waitServerWithin(t, e.Env, npmWait, "everything", func(s map[string]any) bool { return s["last_status"] == "unavailable" })
	if msg, _ := row["last_error"].(string); !strings.Contains(msg, nodePath) ||
		!strings.Contains(msg, "clawd mcp allow --server everything --sha256 "+sum) {
		t.Fatalf("last_error %q: want node's path %s and the allow line for its hash", msg, nodePath)
	}
	allowNode(t, e, "everything")
	row = waitServerWithin(t, e.Env, npmWait, "everything", func(s map[string]any) bool { return s["last_status"] == "connected" })
	approveTools(t, e, "everything")
	if n, _ := row["tool_count"].(float64); n < 10 {
		t.Errorf("tool_count %v: server-everything has at least 10 tools", row["tool_count"])
	}

	list := waitSDKTools(t, cs, "everything__echo")
	names := namesOf(list)
	for _, want := range []string{"everything__echo", "everything__get-structured-content", "everything__get-sum",
		"everything__trigger-long-running-operation", "read_file", "bash"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	for _, n := range names {
		if !toolName.MatchString(n) {
			t.Errorf("tool name %q is not one clients accept", n)
		}
	}

	_, res := call(t, cs, "everything__echo", map[string]any{"message": "hi through clawd"})
	if res.IsError || textOf(res) != "Echo: hi through clawd" {
		t.Errorf("echo: isError %v %q", res.IsError, textOf(res))
	}
	sc, res := call(t, cs, "everything__get-structured-content", map[string]any{"location": "Chicago"})
	want := map[string]any{"temperature": 36.0, "conditions": "Light rain / drizzle", "humidity": 82.0}
	if res.IsError || fmt.Sprint(sc) != fmt.Sprint(want) {
		t.Errorf("structuredContent %v (isError %v), want the server's %v", sc, res.IsError, want)
	}
	if txt := textOf(res); txt != `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}` {
		t.Errorf("structured content's text block %q", txt)
	}
	// The server's own input validation answers isError: a tool error the
	// model can read, not a protocol error, passed through as it came.
	_, res = call(t, cs, "everything__get-sum", map[string]any{"a": "one", "b": 2})
	if !res.IsError || !strings.Contains(textOf(res), "Invalid arguments for tool get-sum") {
		t.Errorf("get-sum with a string: isError %v %q, want the server's validation error", res.IsError, textOf(res))
	}

	cancelLongCall(t, cs, stdinLog)

	// The session and the upstream still work after the cancellation.
	if _, res := call(t, cs, "everything__echo", map[string]any{"message": "still here"}); textOf(res) != "Echo: still here" {
		t.Errorf("echo after the cancel: %q", textOf(res))
	}
	tools := mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "everything", "--json"))
	if !slices.ContainsFunc(tools, cachedTool("everything", "echo")) {
		t.Errorf("mcp tools everything: %v", tools)
	}

	// The client leaving ends clawd, and clawd ends the server.
	cs.Close()
	waitNoProcess(t, spy, "server-everything after its clawd exited")
}

// cancelLongCall starts trigger-long-running-operation (30 s), cancels it
// once the server has received it, and checks that the client is answered
// at once and that clawd forwarded notifications/cancelled with the id it
// had used for the call upstream.
func cancelLongCall(t *testing.T, cs *mcp.ClientSession, stdinLog string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything__trigger-long-running-operation",
			Arguments: map[string]any{"duration": 30, "steps": 30}})
		done <- err
	}()
	var id json.RawMessage
	deadline := time.Now().Add(30 * time.Second)
	for id == nil {
		for _, m := range upstreamMessages(t, stdinLog) {
			if m.Method == "tools/call" && strings.Contains(string(m.Params), `"trigger-long-running-operation"`) {
				id = m.ID
			}
		}
		if id == nil && time.Now().After(deadline) {
			t.Fatalf("the long-running call never reached the server; it read:\n%s", readOrEmpty(stdinLog))
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the cancelled call returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call was not answered within 10 s (the operation runs 30 s)")
	}
	t.Logf("cancelled call returned after %v", time.Since(start).Round(time.Millisecond))
	deadline = time.Now().Add(10 * time.Second)
	for {
		for _, m := range upstreamMessages(t, stdinLog) {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if m.Method == "notifications/cancelled" && json.Unmarshal(m.Params, &p) == nil && string(p.RequestID) == string(id) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no notifications/cancelled for upstream id %s reached the server; it read:\n%s", id, readOrEmpty(stdinLog))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// upstreamMessages parses the complete lines the stdin spy logged.
func upstreamMessages(t *testing.T, path string) []wireMessage {
	var out []wireMessage
	for _, line := range strings.SplitAfter(readOrEmpty(path), "\n") {
		var m wireMessage
		if strings.HasSuffix(line, "\n") && json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func readOrEmpty(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// loopbackOnly is a node preload module that makes a server listening on
// a bare port (server-everything's HTTP mode calls listen(PORT)) listen
// on 127.0.0.1 only, so the test opens nothing to the network.
const loopbackOnly = `import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
  if ((typeof port === "number" || /^\d+$/.test(String(port))) && (rest.length === 0 || typeof rest[0] === "function")) {
    return listen.call(this, Number(port), "127.0.0.1", ...rest);
  }
  return listen.call(this, port, ...rest);
};
`

// startEverythingHTTP runs server-everything in its Streamable HTTP mode
// on a free 127.0.0.1 port and returns its MCP endpoint; the test's
// cleanup kills it.
func startEverythingHTTP(t *testing.T, e *env) string {
	t.Helper()
	script := npmScript(t, everythingPkg)
	pre := filepath.Join(e.Base, "loopback.mjs")
	if err := os.WriteFile(pre, []byte(loopbackOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freeTCPPort(t)
	cmd := exec.Command("node", "--import", "file://"+pre, script, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logs := &clawdtest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	deadline := time.Now().Add(npmWait)
	for !strings.Contains(logs.String(), fmt.Sprintf("listening on port %d", port)) {
		if time.Now().After(deadline) {
			t.Fatalf("server-everything (streamableHttp) did not start:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// TestServerEverythingHTTP puts server-everything's Streamable HTTP mode
// behind clawd. Until its origin is on the egress allowlist it is not
// connected (unavailable, the allow line as its last error) and a call by
// name is refused (-32004 origin_not_allowlisted) before anything is sent;
// once allowed it connects, its tools (approved) are offered, and a call
// returns the upstream's own answer.
func TestServerEverythingHTTP(t *testing.T) {
	e := newEnv(t)
	e.Init()
	url := startEverythingHTTP(t, e)
	origin := strings.TrimSuffix(url, "/mcp")
	wire := &clawdtest.Wire{}
	cs := dialStdio(t, e, dial{era: eras[0], wire: wire, opts: watchTools()})
	out := e.MustRun("mcp", "add", "evhttp", "--http", url, "--connect-timeout", "120")
	if !strings.Contains(out, "clawd egress allow "+origin) {
		t.Errorf("mcp add --http does not propose the egress entry: %s", out)
	}
	row := waitServerWithin(t, e.Env, npmWait, "evhttp", func(s map[string]any) bool { return s["last_status"] == "unavailable" })
	if msg, _ := row["last_error"].(string); !strings.Contains(msg, "clawd egress allow "+origin) {
		t.Errorf("last_error %q lacks the egress allow line", msg)
	}
	// The go-sdk reports -32004 as ErrConnectionClosed (jsonrpc2 uses that
	// code for "server closing") and drops the error's data, so the
	// refusal is read on the wire.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "evhttp__echo", Arguments: map[string]any{"message": "over http"}}); err == nil {
		t.Fatal("evhttp__echo succeeded before its origin was allowed")
	}
	resp, ok := wire.ResponseTo("tools/call")
	var werr struct {
		Code int64 `json:"code"`
	}
	if !ok || json.Unmarshal(resp.Error, &werr) != nil || werr.Code == 0 {
		t.Fatalf("evhttp__echo answered %s; want an error before the origin is allowed", resp.Raw)
	}

	e.MustRun("egress", "allow", origin)
	row = waitServerWithin(t, e.Env, npmWait, "evhttp", func(s map[string]any) bool { return s["last_status"] == "connected" })
	if n, _ := row["tool_count"].(float64); n < 10 {
		t.Errorf("tool_count %v: server-everything has at least 10 tools", row["tool_count"])
	}
	tools := mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "evhttp", "--json"))
	if !slices.ContainsFunc(tools, cachedTool("evhttp", "echo")) {
		t.Errorf("mcp tools evhttp lacks evhttp__echo: %v", tools)
	}
	approveTools(t, e, "evhttp")
	cs2 := dialStdio(t, e, dial{era: eras[0], opts: watchTools()})
	waitSDKTools(t, cs2, "evhttp__echo")
	if _, res := call(t, cs2, "evhttp__echo", map[string]any{"message": "over http"}); res.IsError || textOf(res) != "Echo: over http" {
		t.Errorf("evhttp__echo: isError %v %q", res.IsError, textOf(res))
	}
}

// TestServerFilesystemStdio puts the reference filesystem server behind
// clawd, rooted in a directory of its own: a file inside is read through
// clawd (text and structuredContent as the server sent them), and a path
// outside the root, absolute or by .., is refused by the server itself
// and its content never reaches the client.
func TestServerFilesystemStdio(t *testing.T) {
	script := npmScript(t, filesystemPkg)
	e := newEnv(t)
	e.Init()
	root := filepath.Join(e.Base, "fsroot")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from the filesystem server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := dialStdio(t, e, dial{era: eras[0], opts: watchTools()})
	e.MustRun("mcp", "add", "files", "--stdio", "--connect-timeout", "120", "--", "node", script, root)
	allowNode(t, e, "files")
	waitServerWithin(t, e.Env, npmWait, "files", func(s map[string]any) bool { return s["last_status"] == "connected" })
	approveTools(t, e, "files")
	waitSDKTools(t, cs, "files__read_text_file")

	sc, res := call(t, cs, "files__read_text_file", map[string]any{"path": filepath.Join(root, "hello.txt")})
	if res.IsError || textOf(res) != "hello from the filesystem server\n" || sc["content"] != "hello from the filesystem server\n" {
		t.Errorf("read_text_file: isError %v, text %q, structuredContent %v", res.IsError, textOf(res), sc)
	}
	for _, p := range []string{filepath.Join(e.outside, "secret.txt"), filepath.Join(root, "..", "outside", "secret.txt")} {
		_, res := call(t, cs, "files__read_text_file", map[string]any{"path": p})
		if !res.IsError || !strings.Contains(textOf(res), "Access denied") || strings.Contains(textOf(res), "TOP SECRET") {
			t.Errorf("read_text_file %s outside the root: isError %v %q", p, res.IsError, textOf(res))
		}
	}
}

// freeTCPPort is a port nothing listens on at 127.0.0.1 right now.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
