//go:build linux || darwin

package transport_e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/test/clawdtest"
)

// env is an isolated user environment: HOME, XDG dirs and a workspace.
type env struct {
	t       *testing.T
	root    string // short temp dir (unix socket paths are length-limited)
	home    string
	runtime string
	ws      string
	extra   []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root, err := os.MkdirTemp("", "ce")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	e := &env{t: t, root: root, home: filepath.Join(root, "h"), runtime: filepath.Join(root, "r"), ws: filepath.Join(root, "ws")}
	for _, d := range []string{e.home, e.runtime, e.ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) vars() []string {
	return append(clawdtest.Environ(e.home, e.runtime), e.extra...)
}

func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(clawdBin, args...)
	cmd.Env = e.vars()
	cmd.Dir = e.ws
	return cmd
}

// run runs clawd to completion and returns stdout, stderr and the exit code.
func (e *env) run(stdin string, args ...string) (string, string, int) {
	e.t.Helper()
	cmd := e.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		e.t.Fatalf("clawd %v did not finish", args)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func (e *env) writeConfig(toml string) string {
	e.t.Helper()
	p := filepath.Join(e.home, ".config", "clawde", "mcp-server.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(toml), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) wsID() string {
	ents, err := os.ReadDir(filepath.Join(e.home, ".local", "share", "clawde", "run"))
	if err == nil {
		for _, x := range ents {
			if id, ok := strings.CutSuffix(x.Name(), ".tcp.json"); ok {
				return id
			}
			if id, ok := strings.CutSuffix(x.Name(), ".unix.json"); ok {
				return id
			}
		}
	}
	e.t.Fatal("no state file")
	return ""
}

// serve starts `clawd serve --log-level debug ARGS...` and waits until it
// says it serves.
func (e *env) serve(args ...string) *clawdtest.Daemon {
	e.t.Helper()
	return clawdtest.ServeDaemon(e.t, e.command(append([]string{"serve", "--log-level", "debug"}, args...)...))
}

// startServe starts it without waiting (for daemons expected to fail).
func (e *env) startServe(args ...string) *clawdtest.Daemon {
	e.t.Helper()
	return clawdtest.StartDaemon(e.t, e.command(append([]string{"serve", "--log-level", "debug"}, args...)...))
}

// state is the daemon's state file.
type state struct {
	PID       int    `json:"pid"`
	Addr      string `json:"addr"`
	Socket    string `json:"socket"`
	TokenFile string `json:"token_file"`
}

func (e *env) state(kind string) state {
	e.t.Helper()
	var st state
	b, err := os.ReadFile(filepath.Join(e.home, ".local", "share", "clawde", "run", e.wsID()+"."+kind+".json"))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st, json.RejectUnknownMembers(false)); err != nil {
		e.t.Fatal(err)
	}
	return st
}

func readToken(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// httpSession is a minimal Streamable HTTP client for raw assertions.
type httpSession struct {
	t    *testing.T
	base string
	tok  string
	sid  string
}

func (s *httpSession) post(body string) (int, string) {
	s.t.Helper()
	return s.postCtx(context.Background(), body)
}

func (s *httpSession) postCtx(ctx context.Context, body string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/mcp", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.tok)
	if s.sid != "" {
		req.Header.Set("Mcp-Session-Id", s.sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ""
		}
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		s.sid = id
	}
	return resp.StatusCode, string(b)
}

const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

func (s *httpSession) initialize() {
	s.t.Helper()
	if code, body := s.post(initMsg); code != 200 || s.sid == "" {
		s.t.Fatalf("initialize: HTTP %d %s", code, body)
	}
}

// lines is an NDJSON client on a unix socket.
type lines struct {
	c  net.Conn
	br *bufio.Reader
}

func dialSocket(t *testing.T, path string) *lines {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("connect() to %s: %v", path, err)
	}
	t.Cleanup(func() { c.Close() })
	return &lines{c: c, br: bufio.NewReader(c)}
}

func (l *lines) call(t *testing.T, msg string) string {
	t.Helper()
	if _, err := io.WriteString(l.c, msg+"\n"); err != nil {
		t.Fatal(err)
	}
	l.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := l.br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer to %s: %v", msg, err)
	}
	return strings.TrimSpace(line)
}

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie has exited; only its parent has not reaped it yet.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
		return false
	}
	return true
}
