// Package chain_test drives the authorization chain end to end: the real
// clawd binary over stdio (raw NDJSON, since the go-sdk client turns -32003
// and -32004 into ErrConnectionClosed), the real SQLite file, the real CLI.
// Where a test needs tools this build may not register yet (bash,
// write_file) or an external provider, it assembles the daemon in process
// and serves it through the same stdio transport over pipes.
package chain_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/test/clawdtest"
)

var clawdBin string

func TestMain(m *testing.M) { os.Exit(clawdtest.Main(m, &clawdBin)) }

// env is an isolated user: HOME and the XDG variables point into a temp
// dir, so the config and the database are the test's own.
type env struct {
	home, ws, wsID, outside string
	vars                    []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	home := t.TempDir()
	e := &env{home: home, ws: filepath.Join(home, "ws"), outside: filepath.Join(home, "outside")}
	for _, d := range []string{e.ws, e.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(e.outside, "secret"), []byte("secret\n"), 0o644)
	os.Symlink(e.outside, filepath.Join(e.ws, "out"))
	canon, err := filepath.EvalSymlinks(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	e.wsID = config.WorkspaceID(canon)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "HOME" || strings.HasPrefix(k, "XDG_") {
			continue
		}
		e.vars = append(e.vars, kv)
	}
	for _, kv := range clawdtest.Environ(home, filepath.Join(home, "run")) {
		if !strings.HasPrefix(kv, "PATH=") {
			e.vars = append(e.vars, kv)
		}
	}
	return e
}

// setenv applies the env to this process (for in-process daemons).
func (e *env) setenv(t *testing.T) {
	for _, kv := range e.vars {
		k, v, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") {
			t.Setenv(k, v)
		}
	}
}

func (e *env) dbFile() string { return filepath.Join(e.home, ".local", "share", "clawde", "clawd.db") }
func (e *env) configFile() string {
	return filepath.Join(e.home, ".config", "clawde", "mcp-server.toml")
}

func (e *env) writeConfig(t *testing.T, text string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(e.configFile()), 0o700)
	// Write via rename so the poller sees a new file even within one
	// mtime tick.
	tmp := e.configFile() + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, e.configFile()); err != nil {
		t.Fatal(err)
	}
}

// clawd runs a CLI command and returns stdout, stderr and the exit code.
func (e *env) clawd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(clawdBin, args...)
	cmd.Env, cmd.Dir = e.vars, e.ws
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// mustClawd runs a CLI command that must succeed.
func (e *env) mustClawd(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := e.clawd(t, args...)
	if code != 0 {
		t.Fatalf("clawd %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

// auditRows reads the audit log rows written by one process.
func (e *env) auditRows(t *testing.T, pid int) []store.AuditRow {
	t.Helper()
	db, err := store.Open(e.dbFile(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryAudit(context.Background(), store.AuditFilter{PID: int64(pid)})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// rowFor finds the row of a request id.
func rowFor(rows []store.AuditRow, id string) (store.AuditRow, int) {
	var found store.AuditRow
	n := 0
	for _, r := range rows {
		if r.RequestID == id {
			found = r
			n++
		}
	}
	return found, n
}

// client speaks NDJSON to a server.
type client struct {
	t     *testing.T
	mu    sync.Mutex // serializes writes
	w     io.Writer
	lines chan []byte
	notes []map[string]any
	id    int
}

func newClient(t *testing.T, w io.Writer, r io.Reader) *client {
	c := &client{t: t, w: w, lines: make(chan []byte, 1024)}
	go func() {
		defer close(c.lines)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 && line[len(line)-1] == '\n' {
				c.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *client) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("writing to clawd: %v", err)
	}
}

// request sends a request and returns its response; notifications that
// arrive meanwhile are kept for waitNote.
func (c *client) request(method string, params any) map[string]any {
	c.t.Helper()
	c.id++
	id := c.id
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.send(msg)
	return c.await(float64(id))
}

func (c *client) await(id float64) map[string]any {
	c.t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("clawd closed its output while waiting for response %v", id)
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				c.t.Fatalf("bad line from clawd: %q", line)
			}
			if _, isNote := m["method"]; isNote {
				c.notes = append(c.notes, m)
				continue
			}
			if m["id"] == id {
				return m
			}
			c.t.Fatalf("unexpected message %s while waiting for %v", line, id)
		case <-timeout:
			c.t.Fatalf("no response to %v within 15 s", id)
		}
	}
}

// waitNote waits for a notification with the method (already received
// ones count) and consumes it.
func (c *client) waitNote(method string, within time.Duration) bool {
	c.t.Helper()
	deadline := time.After(within)
	for {
		for i, n := range c.notes {
			if n["method"] == method {
				c.notes = append(c.notes[:i], c.notes[i+1:]...)
				return true
			}
		}
		select {
		case line, ok := <-c.lines:
			if !ok {
				return false
			}
			var m map[string]any
			json.Unmarshal(line, &m)
			if _, isNote := m["method"]; !isNote {
				c.t.Fatalf("unexpected response %s while waiting for %s", line, method)
			}
			c.notes = append(c.notes, m)
		case <-deadline:
			return false
		}
	}
}

func (c *client) initialize(clientName string) {
	c.t.Helper()
	r := c.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": clientName, "version": "1"},
	})
	if r["result"] == nil {
		c.t.Fatalf("initialize: %v", r)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

func (c *client) callTool(name string, args any) map[string]any {
	c.t.Helper()
	return c.request("tools/call", map[string]any{"name": name, "arguments": args})
}

// toolNames is tools/list's names.
func (c *client) toolNames() []string {
	c.t.Helper()
	r := c.request("tools/list", nil)
	res, _ := r["result"].(map[string]any)
	list, _ := res["tools"].([]any)
	var out []string
	for _, t := range list {
		out = append(out, t.(map[string]any)["name"].(string))
	}
	return out
}

// proc is a `clawd serve` child process.
type proc struct {
	*client
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	stderr bytes.Buffer
}

func (p *proc) Write(b []byte) (int, error) { // collects stderr
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

func (p *proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (e *env) serve(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(clawdBin, append([]string{"serve"}, args...)...)}
	p.cmd.Env, p.cmd.Dir = e.vars, e.ws
	p.cmd.Stderr = p
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.client = newClient(t, p.stdin, stdout)
	t.Cleanup(func() {
		p.stdin.Close()
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	})
	return p
}

// errOf returns a response's error code, message and data (code 0 if none).
func errOf(r map[string]any) (int, string, map[string]any) {
	e, ok := r["error"].(map[string]any)
	if !ok {
		return 0, "", nil
	}
	data, _ := e["data"].(map[string]any)
	return int(e["code"].(float64)), e["message"].(string), data
}

// toolOK reports whether a response is a tool result without isError.
func toolOK(r map[string]any) bool {
	res, ok := r["result"].(map[string]any)
	return ok && res["isError"] == false
}

// waitOutcome polls until the row of request id has its (asynchronous)
// outcome recorded.
func (e *env) waitOutcome(t *testing.T, pid int, id string) store.AuditRow {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		row, n := rowFor(e.auditRows(t, pid), id)
		if n == 1 && row.Outcome != nil {
			return row
		}
		if time.Now().After(deadline) {
			t.Fatalf("row of request %s: %d rows, outcome never recorded (%+v)", id, n, row)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
