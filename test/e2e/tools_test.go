package e2e

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/test/clawdtest"
)

// The server spawned over stdio with nothing
// but stdio, clawd answers initialize with the negotiated version.
func Test_server_starts_on_stdio(t *testing.T) {
	e := newEnv(t)
	r := e.Stdio()
	r.SendLine(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"cc","version":"1"}}}`)
	line := r.RecvLine()
	if !strings.HasPrefix(line, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05",`) {
		t.Fatalf("initialize response = %s", line)
	}
	if !strings.Contains(line, `"serverInfo":{"name":"clawde-mcp","version":"`) {
		t.Errorf("serverInfo missing: %s", line)
	}
}

// The spec's test_tools_list_returns_correct_schema: all five tools, each
// with exactly the spec's input schema and output schema (bash's output adds
// timed_out, and its timeout_ms description states the configured default
// instead of citing a document), and the permission hint as annotations.
func Test_tools_list_returns_correct_schema(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "spec_schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		InputSchema  map[string]any `json:"inputSchema"`
		OutputSchema map[string]any `json:"outputSchema"`
		Permission   string         `json:"permission"`
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, newEnv(t))
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*mcp.Tool{}
			for _, tool := range res.Tools {
				got[tool.Name] = tool
			}
			if len(got) != len(want) {
				t.Errorf("tools/list has %d tools, want %d", len(got), len(want))
			}
			for name, w := range want {
				tool := got[name]
				if tool == nil {
					t.Errorf("tool %s missing", name)
					continue
				}
				if in := roundTrip(t, tool.InputSchema); !reflect.DeepEqual(in, w.InputSchema) {
					t.Errorf("%s inputSchema = %v\nwant %v", name, in, w.InputSchema)
				}
				out := roundTrip(t, tool.OutputSchema)
				if name == "bash" {
					props := out["properties"].(map[string]any)
					if _, ok := props["timed_out"]; !ok {
						t.Error("bash outputSchema lacks timed_out")
					}
					delete(props, "timed_out")
				}
				if !reflect.DeepEqual(out, w.OutputSchema) {
					t.Errorf("%s outputSchema = %v\nwant %v", name, out, w.OutputSchema)
				}
				a := tool.Annotations
				if a == nil {
					t.Errorf("%s has no annotations", name)
					continue
				}
				readOnly := w.Permission == "read"
				if a.ReadOnlyHint != readOnly || a.DestructiveHint == nil || *a.DestructiveHint == readOnly {
					t.Errorf("%s (%s) annotations = readOnly %v destructive %v", name, w.Permission, a.ReadOnlyHint, a.DestructiveHint)
				}
			}
		})
	}
}

func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// call runs a tool through the go-sdk client and returns its structured
// content (failing the test on a protocol error).
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, *mcp.CallToolResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	return sc, res
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestEveryTool calls each of the five tools through the official go-sdk
// client, over every transport, and checks the spec's output objects.
func TestEveryTool(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			e := newEnv(t)
			e.Write("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n")
			e.Write("README.md", "# project\n")
			cs := tr.connect(t, e)

			// write_file, then read it back from disk and through read_file.
			sc, res := call(t, cs, "write_file", map[string]any{"path": "notes/list.txt", "content": "buy milk\n", "create_parents": true})
			if res.IsError {
				t.Fatalf("write_file: %s", textOf(res))
			}
			if sc["bytes_written"] != float64(9) || sc["path"] != filepath.Join(e.WS, "notes", "list.txt") {
				t.Errorf("write_file = %v", sc)
			}
			if b, _ := os.ReadFile(filepath.Join(e.WS, "notes", "list.txt")); string(b) != "buy milk\n" {
				t.Errorf("file on disk = %q", b)
			}
			sc, _ = call(t, cs, "read_file", map[string]any{"path": "notes/list.txt"})
			if sc["content"] != "buy milk\n" || sc["size_bytes"] != float64(9) || sc["encoding"] != "utf8" || sc["truncated"] != false {
				t.Errorf("read_file = %v", sc)
			}
			sc, _ = call(t, cs, "read_file", map[string]any{"path": filepath.Join(e.WS, "src", "main.rs"), "encoding": "base64"})
			if dec, _ := base64.StdEncoding.DecodeString(sc["content"].(string)); !strings.HasPrefix(string(dec), "fn main()") {
				t.Errorf("read_file base64 of an absolute in-workspace path = %v", sc)
			}

			// list_dir: sorted, relative paths, kinds.
			sc, _ = call(t, cs, "list_dir", map[string]any{"recursive": true})
			var paths []string
			for _, it := range sc["entries"].([]any) {
				paths = append(paths, it.(map[string]any)["path"].(string))
			}
			wantPaths := []string{"README.md", "notes", "notes/list.txt", "src", "src/main.rs"}
			if !reflect.DeepEqual(paths, wantPaths) || sc["total"] != float64(5) {
				t.Errorf("list_dir paths = %v total %v, want %v", paths, sc["total"], wantPaths)
			}

			// search: the spec's example.
			sc, _ = call(t, cs, "search", map[string]any{"query": "fn main", "glob": "*.rs"})
			ms := sc["matches"].([]any)
			if len(ms) != 1 || sc["total_matches"] != float64(1) {
				t.Fatalf("search = %v", sc)
			}
			m := ms[0].(map[string]any)
			if m["file"] != "src/main.rs" || m["line"] != float64(1) || m["col"] != float64(1) || m["text"] != "fn main() {" {
				t.Errorf("search match = %v", m)
			}

			// bash: runs in the workspace, non-zero exit is a result.
			sc, res = call(t, cs, "bash", map[string]any{"command": "pwd; echo err >&2; exit 3"})
			if res.IsError || sc["exit_code"] != float64(3) || sc["stdout"] != e.WS+"\n" || sc["stderr"] != "err\n" {
				t.Errorf("bash = %v (isError %v)", sc, res.IsError)
			}
			sc, _ = call(t, cs, "bash", map[string]any{"command": "sleep 5", "timeout_ms": 200})
			if sc["exit_code"] != float64(124) || sc["timed_out"] != true {
				t.Errorf("bash timeout = %v", sc)
			}

			// Tool failures the model should see are isError results.
			_, res = call(t, cs, "read_file", map[string]any{"path": "missing.txt"})
			if !res.IsError || !strings.Contains(textOf(res), "missing.txt") {
				t.Errorf("read_file of a missing file: isError %v %q", res.IsError, textOf(res))
			}
			e.Write("bin.dat", "\xff\xfe\x00")
			_, res = call(t, cs, "read_file", map[string]any{"path": "bin.dat"})
			if !res.IsError || !strings.Contains(textOf(res), "base64") {
				t.Errorf("read_file of invalid UTF-8 should suggest base64: %q", textOf(res))
			}
			_, res = call(t, cs, "read_file", map[string]any{"path": "README.md", "bogus": true})
			if !res.IsError || !strings.Contains(textOf(res), "bogus") {
				t.Errorf("unknown argument: isError %v %q", res.IsError, textOf(res))
			}
		})
	}
}

// TestCancelKillsBash cancels a running bash call from the go-sdk client
// (which sends notifications/cancelled) and checks that the command's
// process group, backgrounded children included, is gone.
func TestCancelKillsBash(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			e := newEnv(t)
			cs := tr.connect(t, e)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
					"command": "sleep 60 & echo $! > bg.pid; echo $$ > fg.pid; wait", "timeout_ms": 60000}})
				done <- err
			}()
			bg := waitPid(t, filepath.Join(e.WS, "bg.pid"))
			fg := waitPid(t, filepath.Join(e.WS, "fg.pid"))
			cancel()
			if err := <-done; err == nil {
				t.Error("cancelled call returned no error")
			}
			for _, pid := range []int{bg, fg} {
				waitGone(t, pid)
			}
			// The session still works.
			if sc, _ := call(t, cs, "bash", map[string]any{"command": "echo ok"}); sc["stdout"] != "ok\n" {
				t.Errorf("after cancel: %v", sc)
			}
		})
	}
}

func waitPid(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(file)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", file)
	return 0
}

// waitGone waits until pid no longer exists (zombies count as gone: they
// are reaped by whoever owns them). runstate.Alive is clawd's own check:
// signal 0 on unix, opening the process on Windows.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !runstate.Alive(pid) {
			return
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(b), ") Z ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("process %d survived the cancel", pid)
}

// A stream client that goes away (its socket closed, or a stdio host that
// closed both clawd's stdin and stdout: it died) cancels its running bash
// calls: the process group is killed at once, not at the call's timeout,
// and the row says cancelled. Only the input's end is not enough: a client
// that half-closes (clawd connect at its stdin's end) still gets its
// answers.
func TestClientGoneKillsBash(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 60 & echo $! > bg.pid; echo $$ > fg.pid; wait","timeout_ms":30000}}}`
	check := func(t *testing.T, e *env) {
		t.Helper()
		bg := waitPid(t, filepath.Join(e.WS, "bg.pid"))
		fg := waitPid(t, filepath.Join(e.WS, "fg.pid"))
		for _, pid := range []int{bg, fg} {
			waitGone(t, pid)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			out, _, _ := e.Run("audit")
			if strings.Contains(out, "cancelled") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the call's row is not cancelled:\n%s", out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Run("unix socket closed", func(t *testing.T) {
		e := newEnv(t)
		_, st := e.Daemon("unix_socket")
		c := clawdtest.DialUnix(t, st.Socket)
		c.Initialize("claude-code")
		c.SendLine(call)
		waitPid(t, filepath.Join(e.WS, "fg.pid"))
		c.Close()
		check(t, e)
	})
	hostDied := func(t *testing.T, e *env, args ...string) {
		cmd := e.Command(args...)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cc","version":"1"}}}`+"\n"+call+"\n")
		waitPid(t, filepath.Join(e.WS, "fg.pid"))
		in.Close()
		out.Close()
		check(t, e)
	}
	t.Run("stdio host died", func(t *testing.T) {
		hostDied(t, newEnv(t), "serve")
	})
	t.Run("clawd connect's host died", func(t *testing.T) {
		e := newEnv(t)
		_, st := e.Daemon("unix_socket")
		hostDied(t, e, "connect", "--socket", st.Socket)
	})
	t.Run("unix socket half-closed still answered", func(t *testing.T) {
		e := newEnv(t)
		_, st := e.Daemon("unix_socket")
		conn, err := net.Dial("unix", st.Socket)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cc","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 1; echo late"}}}`+"\n")
		conn.(*net.UnixConn).CloseWrite()
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(conn)
		if !strings.Contains(string(b), `late\n`) {
			t.Errorf("a half-closed client lost its answer: %s", b)
		}
	})
}
