// Package e2e drives the built clawd binary with real MCP clients: the
// official go-sdk client (a client we did not write) and raw NDJSON where a
// test must see exact bytes or error codes the go-sdk client rewrites.
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

// clawdBin is the binary under test, built once by TestMain.
var clawdBin string

func TestMain(m *testing.M) { os.Exit(clawdtest.Main(m, &clawdBin)) }

// env is an isolated world for one test: a home (config, data, runtime dir),
// a workspace, and an outside directory and a same-prefix sibling that must
// never be touched.
type env struct {
	t       *testing.T
	base    string
	home    string
	ws      string // canonical workspace path
	outside string
	evil    string // <ws>_evil: shares the workspace's prefix
}

func newEnv(t *testing.T) *env {
	t.Helper()
	// A short base: unix socket paths are limited to ~104 bytes.
	tmp, err := os.MkdirTemp("", "ce")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	base, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{
		t:       t,
		base:    base,
		home:    filepath.Join(base, "home"),
		ws:      filepath.Join(base, "ws"),
		outside: filepath.Join(base, "outside"),
		evil:    filepath.Join(base, "ws_evil"),
	}
	for _, d := range []string{e.home, e.ws, e.outside, e.evil, filepath.Join(e.home, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e.writeOutside("secret.txt", "TOP SECRET\n")
	if err := os.WriteFile(filepath.Join(e.evil, "evil.txt"), []byte("evil\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) writeOutside(name, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.outside, name), []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// write creates a workspace file (and its parents).
func (e *env) write(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.ws, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// environ is the child environment: everything clawd derives its paths
// from points into the test's home.
func (e *env) environ() []string { return clawdtest.Environ(e.home, filepath.Join(e.home, "run")) }

// command returns `clawd args...` in the test's environment, run from the
// workspace.
func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(clawdBin, args...)
	cmd.Env = e.environ()
	cmd.Dir = e.ws
	return cmd
}

// run runs clawd to completion and returns stdout, stderr and exit code.
func (e *env) run(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	cmd := e.command(args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("clawd %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// snapshot records every file under the outside and sibling directories
// (name, size, mode, mtime, content) so a test can prove nothing changed.
func (e *env) snapshot() map[string]string {
	e.t.Helper()
	snap := map[string]string{}
	for _, root := range []string{e.outside, e.evil} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			content := ""
			if fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				content = string(b)
			}
			snap[p] = fmt.Sprintf("%v %d %d %q", fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), content)
			return nil
		})
	}
	return snap
}

func (e *env) assertUnchanged(before map[string]string) {
	e.t.Helper()
	after := e.snapshot()
	for p, v := range before {
		if after[p] != v {
			e.t.Errorf("outside the workspace %s changed: %s -> %s", p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			e.t.Errorf("outside the workspace %s was created", p)
		}
	}
}

// transport connects a go-sdk client session to a clawd serving e.
type transport struct {
	name    string
	connect func(t *testing.T, e *env) *mcp.ClientSession
}

// transports are the ways a client reaches clawd; table tests run over all.
var transports = []transport{
	{name: "stdio", connect: connectStdio},
}

// connectStdio spawns `clawd serve` with the go-sdk's CommandTransport and
// connects with the client's default options (it first probes
// server/discover of protocol 2026-07-28, then falls back to initialize).
func connectStdio(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	return sdkConnect(t, &mcp.CommandTransport{Command: e.command("serve", "--client", "cc")})
}

func sdkConnect(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "e2e"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("go-sdk client connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// rawClient speaks NDJSON to a `clawd serve` process directly.
type rawClient struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	nextI int
}

func (e *env) startRaw(args ...string) *rawClient {
	e.t.Helper()
	return e.startRawTo(os.Stderr, args...)
}

// startRawTo is startRaw with clawd's stderr going to stderr.
func (e *env) startRawTo(stderr io.Writer, args ...string) *rawClient {
	e.t.Helper()
	cmd := e.command(append([]string{"serve"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	r := &rawClient{t: e.t, cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	e.t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return r
}

func (r *rawClient) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.stdin, line+"\n"); err != nil {
		r.t.Fatalf("write to clawd: %v", err)
	}
}

func (r *rawClient) recv() string {
	r.t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			r.t.Fatal("clawd closed its stdout")
		}
		return l
	case <-time.After(10 * time.Second):
		r.t.Fatal("no response from clawd within 10s")
		return ""
	}
}

// initialize performs the handshake as client name.
func (r *rawClient) initialize(client string) string {
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + client + `","version":"1"}}}`)
	resp := r.recv()
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return resp
}

// callTool sends a tools/call and returns the decoded response.
func (r *rawClient) callTool(name string, args any) rpcResponse {
	r.t.Helper()
	a, err := json.Marshal(args)
	if err != nil {
		r.t.Fatal(err)
	}
	r.nextI++
	r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, r.nextI, name, a))
	return decodeResponse(r.t, r.recv())
}

type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

type rpcResponse struct {
	ID     jsontext.Value `json:"id"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	} `json:"result"`
	Error *rpcError `json:"error"`
	Raw   string    `json:"-"`
}

func decodeResponse(t *testing.T, line string) rpcResponse {
	t.Helper()
	var r rpcResponse
	if err := json.Unmarshal([]byte(line), &r, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("response %s: %v", line, err)
	}
	r.Raw = line
	return r
}
