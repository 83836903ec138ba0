package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/test/clawdtest"
)

// shortDir returns a temp dir with a short path: unix socket paths are
// limited to about 104 bytes, which t.TempDir paths can exceed.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "cl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type unixFixture struct {
	path string
	ln   *UnixListener
	log  *clawdtest.SyncBuffer
	bt   *blockTool
	stop func()
}

func startUnix(t *testing.T, path string) *unixFixture {
	t.Helper()
	return startUnixOn(t, path, nil)
}

// startUnixOn is startUnix with the listener wrapped by wrap (nil: as is).
func startUnixOn(t *testing.T, path string, wrap func(net.Listener) net.Listener) *unixFixture {
	t.Helper()
	ln, err := ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	bt := newBlockTool()
	logs := &clawdtest.SyncBuffer{}
	u := &UnixServer{Server: newTestMCPServer(bt), Subject: "ws-test", Logger: newLogger(logs)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var served net.Listener = ln
	if wrap != nil {
		served = wrap(ln)
	}
	go func() { done <- u.Serve(ctx, served) }()
	f := &unixFixture{path: path, ln: ln, log: logs, bt: bt}
	var stopped bool
	f.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
		ln.Close()
	}
	t.Cleanup(f.stop)
	return f
}

// lineConn is an NDJSON client.
type lineConn struct {
	c  net.Conn
	br *bufio.Reader
}

func dialLines(t *testing.T, path string) *lineConn {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &lineConn{c: c, br: bufio.NewReader(c)}
}

func (l *lineConn) send(t *testing.T, msg string) {
	t.Helper()
	if _, err := io.WriteString(l.c, msg+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (l *lineConn) recv(t *testing.T) string {
	t.Helper()
	l.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := l.br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading a response: %v", err)
	}
	return strings.TrimSpace(line)
}

// Test_server_starts_on_unix_socket is the spec's test: the server binds the
// configured path, the socket file exists there (mode 0600) and connect()
// succeeds and speaks MCP.
func Test_server_starts_on_unix_socket(t *testing.T) {
	path := filepath.Join(shortDir(t), "clawd.ws.sock")
	f := startUnix(t, path)
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("no socket at %s: %v", path, err)
	}
	if fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("%s is %v, not a socket", path, fi.Mode())
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("socket mode %04o, want 0600", perm)
	}
	c := dialLines(t, path)
	c.send(t, strings.Replace(initBody, `"name":"test"`, `"name":"opencode"`, 1))
	if got := c.recv(t); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize answered %s", got)
	}
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`)
	if got := c.recv(t); !strings.Contains(got, `"structuredContent":{"args":{"x":1}}`) {
		t.Fatalf("tools/call answered %s", got)
	}
	// Each connection is its own session: a second one starts uninitialized.
	c2 := dialLines(t, path)
	c2.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if got := c2.recv(t); !strings.Contains(got, "not initialized") {
		t.Errorf("a new connection shared the first one's session: %s", got)
	}
	f.stop()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left behind after shutdown: %v", err)
	}
	if _, err := os.Lstat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left behind after shutdown: %v", err)
	}
}

func TestUnixSessionCallerIsPeercred(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	f := startUnix(t, path)
	c := dialLines(t, path)
	c.send(t, strings.Replace(initBody, `"name":"test"`, `"name":"claude-code"`, 1))
	c.recv(t)
	// block reports nothing about its caller, but the chain resolved the
	// entity: cc:* is trusted, so the call runs.
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	<-f.bt.started
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	deadline := time.Now().Add(5 * time.Second)
	for f.bt.cancelled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f.bt.cancelled.Load() != 1 {
		t.Fatal("notifications/cancelled on the socket did not cancel the call")
	}
	// A cancelled call on a stream gets no response (MCP); the next request
	// is answered next.
	c.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := c.recv(t); !strings.Contains(got, `"id":3`) {
		t.Errorf("after a cancelled call the next line is %s, want the ping's answer", got)
	}
}

func TestListenUnixExistingPaths(t *testing.T) {
	t.Run("stale socket is replaced", func(t *testing.T) {
		path := filepath.Join(shortDir(t), "s.sock")
		// A socket file nobody listens on: bind, then close without unlink.
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false)
		ln.Close()
		if _, err := os.Lstat(path); err != nil {
			t.Fatal("setup: no stale socket")
		}
		f := startUnix(t, path)
		c := dialLines(t, f.path)
		c.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if got := c.recv(t); !strings.Contains(got, `"result":{}`) {
			t.Errorf("ping on the replacing socket: %s", got)
		}
	})
	t.Run("live socket means already running", func(t *testing.T) {
		path := filepath.Join(shortDir(t), "s.sock")
		startUnix(t, path)
		_, err := ListenUnix(path)
		if !errors.Is(err, ErrAlreadyRunning) {
			t.Fatalf("second ListenUnix: %v, want ErrAlreadyRunning", err)
		}
		// The first daemon still works.
		c := dialLines(t, path)
		c.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		c.recv(t)
	})
	t.Run("live socket of a daemon without our lock", func(t *testing.T) {
		path := filepath.Join(shortDir(t), "s.sock")
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		if _, err := ListenUnix(path); !errors.Is(err, ErrAlreadyRunning) {
			t.Fatalf("ListenUnix over a live socket: %v, want ErrAlreadyRunning", err)
		}
	})
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"regular file", func(t *testing.T, path string) { os.WriteFile(path, []byte("keep me"), 0o600) }, "a regular file"},
		{"symlink", func(t *testing.T, path string) { os.Symlink("/etc/passwd", path) }, "a symlink"},
		{"dangling symlink", func(t *testing.T, path string) { os.Symlink("/nonexistent/x.sock", path) }, "a symlink"},
		{"directory", func(t *testing.T, path string) { os.Mkdir(path, 0o700) }, "a directory"},
	} {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			path := filepath.Join(shortDir(t), "s.sock")
			tt.setup(t, path)
			before, _ := os.Lstat(path)
			ln, err := ListenUnix(path)
			if err == nil {
				ln.Close()
				t.Fatal("ListenUnix succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--socket") {
				t.Errorf("error %q should name %q and the way out", err, tt.want)
			}
			after, err := os.Lstat(path)
			if err != nil || after.Mode() != before.Mode() || after.ModTime() != before.ModTime() {
				t.Error("ListenUnix touched what was at the path")
			}
			if _, err := os.Lstat(path + ".lock"); err == nil {
				// The lock file may stay, but must not be locked: a retry
				// after the user fixes the path must work.
				os.Remove(path)
				ln, err := ListenUnix(path)
				if err != nil {
					t.Fatalf("after removing the obstacle: %v", err)
				}
				ln.Close()
			}
		})
	}
	t.Run("symlinked lock file is refused", func(t *testing.T) {
		dir := shortDir(t)
		path := filepath.Join(dir, "s.sock")
		target := filepath.Join(dir, "victim")
		os.WriteFile(target, []byte("x"), 0o600)
		os.Symlink(target, path+".lock")
		if ln, err := ListenUnix(path); err == nil {
			ln.Close()
			t.Fatal("ListenUnix followed a symlinked lock file")
		}
	})
	t.Run("path too long", func(t *testing.T) {
		path := "/tmp/" + strings.Repeat("x", 120) + ".sock"
		if _, err := ListenUnix(path); err == nil || !strings.Contains(err.Error(), "longer than unix sockets allow") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestListenUnixConcurrentStarts(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	const n = 8
	type res struct {
		ln  *UnixListener
		err error
	}
	out := make(chan res, n)
	for range n {
		go func() {
			ln, err := ListenUnix(path)
			out <- res{ln, err}
		}()
	}
	won := 0
	for range n {
		r := <-out
		if r.err == nil {
			won++
			defer r.ln.Close()
		} else if !errors.Is(r.err, ErrAlreadyRunning) {
			t.Errorf("a losing start failed with %v, want ErrAlreadyRunning", r.err)
		}
	}
	if won != 1 {
		t.Fatalf("%d daemons bound the socket at once, want exactly 1", won)
	}
}

func TestUnixConnectionCap(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	ln, err := ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &clawdtest.SyncBuffer{}
	u := &UnixServer{Server: newTestMCPServer(newBlockTool()), Subject: "ws", Logger: newLogger(logs), MaxConns: 1}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go u.Serve(ctx, ln)
	c1 := dialLines(t, path)
	c1.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c1.recv(t)
	c2, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c2.Read(make([]byte, 1)); err != io.EOF || n != 0 {
		t.Errorf("connection over the cap: read %d, %v; want EOF", n, err)
	}
	if !strings.Contains(logs.String(), "too many open connections") {
		t.Error("the refused connection was not logged")
	}
}

// The peer-credential test runs a client as another user (nobody). The
// socket is made world-writable for it, so that only the uid check stands
// between that user and the daemon.

const helperEnv = "CLAWD_TRANSPORT_TEST_HELPER"

// runHelper is the client side when the test binary is re-executed as
// another user: it connects, sends initialize and reports what came back.
func runHelper() bool {
	path := os.Getenv(helperEnv)
	if path == "" {
		return false
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Printf("dial-error: %v\n", err)
		os.Exit(3)
	}
	fmt.Fprintln(c, initBody)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	data, err := io.ReadAll(c)
	fmt.Printf("uid=%d read=%q err=%v\n", os.Getuid(), data, err)
	os.Exit(0)
	return true
}

func TestPeerWithOtherUIDRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another user (nobody)")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	dir := shortDir(t)
	os.Chmod(dir, 0o755)
	// The test binary, where nobody may run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "helper.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.sock")
	f := startUnix(t, path)
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}

	run := func(asNobody bool) string {
		var cmd *exec.Cmd
		if asNobody {
			cmd = exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin)
		} else {
			cmd = exec.Command(bin)
		}
		cmd.Env = []string{helperEnv + "=" + path}
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		return string(out)
	}
	// Control: the same helper as our own user gets an answer.
	if out := run(false); !strings.Contains(out, "protocolVersion") {
		t.Fatalf("same-uid client got no answer: %s", out)
	}
	out := run(true)
	if !strings.Contains(out, "uid=65534") {
		t.Fatalf("the helper did not run as nobody: %s", out)
	}
	if !strings.Contains(out, `read=""`) {
		t.Errorf("a client of another uid got data from the daemon: %s", out)
	}
	if log := f.log.String(); !strings.Contains(log, "peer runs as another user") || !strings.Contains(log, "peer_uid=65534") {
		t.Errorf("the refusal was not logged with the peer's uid:\n%s", log)
	}
}

// TestUnixClientThatStopsReading: a socket client that sends calls and
// never reads the answers is disconnected once an answer has waited
// writeStall, with a warning saying why; another client is served
// meanwhile and after.
func TestUnixClientThatStopsReading(t *testing.T) {
	const stall = 300 * time.Millisecond
	path, logs := startUnixWith(t, func(u *UnixServer) { u.writeStall = stall })
	stuck := dialLines(t, path)
	stuck.send(t, initBody)
	stuck.recv(t)
	payload := strings.Repeat("x", 512<<10) // answers far beyond the socket's buffers
	for i := 0; i < 4; i++ {
		stuck.send(t, `{"jsonrpc":"2.0","id":`+fmt.Sprint(i)+`,"method":"tools/call","params":{"name":"echo","arguments":{"p":"`+payload+`"}}}`)
	}
	other := dialLines(t, path)
	other.send(t, initBody)
	other.recv(t)
	other.send(t, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if got := other.recv(t); !strings.Contains(got, `"id":"p"`) {
		t.Fatalf("ping of another client answered %s", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "the client stopped reading its answers") {
		if time.Now().After(deadline) {
			t.Fatalf("no stall after %v; log:\n%s", 10*time.Second, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The connection is closed: what was sent drains, then EOF.
	stuck.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, stuck.c); err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the stalled connection was not closed: %v", err)
	}
	other.send(t, `{"jsonrpc":"2.0","id":"p2","method":"ping"}`)
	if got := other.recv(t); !strings.Contains(got, `"id":"p2"`) {
		t.Fatalf("second ping answered %s", got)
	}
}

// TestUnixRefusedCredentialAudited: clawd/authenticate with a per-client
// credential whose secret matched but that is refused (revoked, of another
// workspace) is a Deny row at step auth, as the same credential's request
// over HTTP is; before, the socket left no trace of it. A credential
// nobody issued leaves no row.
func TestUnixRefusedCredentialAudited(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	ln, err := ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	audit := &chain.MemoryAudit{}
	u := &UnixServer{Server: newTestMCPServer(newBlockTool()), Subject: "ws-test", Auth: revokedAuth{}, Audit: audit}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); u.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	for _, cred := range []string{"revoked", "elsewhere", "nope"} {
		c := dialLines(t, path)
		c.send(t, `{"jsonrpc":"2.0","id":1,"method":"clawd/authenticate","params":{"credential":"`+cred+`"}}`)
		if got := c.recv(t); !strings.Contains(got, `"code":-32001`) {
			t.Fatalf("%s: %s", cred, got)
		}
	}
	rows := audit.Rows()
	if len(rows) != 2 {
		t.Fatalf("%d audit rows, want 2 (the revoked and the other workspace's credential): %+v", len(rows), rows)
	}
	want := []chain.AuditRecord{
		{EntityID: "cc:ws-test", CredentialID: "0123456789abcdef", Reason: "credential_revoked"},
		{EntityID: "oc:ws-test", CredentialID: "fedcba9876543210", Reason: "credential_for_another_workspace"},
	}
	for i, r := range rows {
		w := want[i]
		if r.EntityID != w.EntityID || r.CredentialID != w.CredentialID || r.Reason != w.Reason || r.RequestID != "clawd/authenticate" ||
			r.Result != chain.ResultDeny || r.Step != chain.StepAuth || r.Transport != "unix" || r.TrustLevel != chain.NoTrustLevel {
			t.Errorf("row %d: %+v, want %+v, Deny at step auth over unix", i, r, w)
		}
	}
}
