//go:build linux || darwin

package transport_e2e

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

// Test_server_starts_on_unix_socket is the spec's test with the binary:
// `transport = "unix_socket"` and `socket_path` in the config make clawd
// bind that path; the socket file exists there (0600) and connect() works.
func Test_server_starts_on_unix_socket(t *testing.T) {
	e := newEnv(t)
	sock := filepath.Join(e.Base, "custom.sock")
	e.WriteConfig("transport = \"unix_socket\"\nsocket_path = \"" + sock + "\"\n")
	d := e.serve()
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatalf("no socket at the configured socket_path: %v", err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
	}
	l := clawdtest.DialUnix(t, sock)
	if got := l.Call(initMsg); !strings.Contains(got, `"serverInfo":{"name":"clawde-mcp"`) {
		t.Fatalf("initialize: %s", got)
	}
	if got := l.Call(`{"jsonrpc":"2.0","id":2,"method":"clawd/health"}`); !strings.Contains(got, `"status":"ok"`) || !strings.Contains(got, `"active_tools":`) {
		t.Errorf("clawd/health on the socket: %s", got)
	}
	d.Stop()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Error("the socket was left behind by a clean shutdown")
	}
}

func TestUnixDefaultPathAndFlagOverride(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "unix_socket")
	matches, _ := filepath.Glob(filepath.Join(e.Runtime, "clawd.ws-*.sock"))
	if len(matches) != 1 {
		t.Fatalf("sockets under XDG_RUNTIME_DIR: %v, want clawd.<workspace>.sock", matches)
	}
	e2 := newEnv(t)
	sock := filepath.Join(e2.Base, "flag.sock")
	e2.WriteConfig("socket_path = \"" + filepath.Join(e2.Base, "config.sock") + "\"\n")
	e2.serve("--transport", "unix_socket", "--socket", sock)
	if _, err := os.Lstat(sock); err != nil {
		t.Errorf("--socket did not override socket_path: %v", err)
	}
	// The client finds a daemon started with --socket through its state file.
	if out, errOut, code := e2.Run("health"); code != 0 || !strings.Contains(out, sock) {
		t.Errorf("clawd health: %d %s %s", code, out, errOut)
	}
}

func TestUnixAlreadyRunningAndStale(t *testing.T) {
	e := newEnv(t)
	d := e.serve("--transport", "unix_socket")
	sock := e.State("unix").Socket
	_, errOut, code := e.Run("serve", "--transport", "unix_socket")
	if code != 1 || !strings.Contains(errOut, "already running") {
		t.Fatalf("second daemon: exit %d %s, want 1 and \"already running\"", code, errOut)
	}
	// A daemon killed without cleanup leaves a stale socket; the next
	// start replaces it.
	d.Kill()
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("setup: the killed daemon left no socket: %v", err)
	}
	e.serve("--transport", "unix_socket")
	l := clawdtest.DialUnix(t, sock)
	if got := l.Call(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); !strings.Contains(got, `"result":{}`) {
		t.Errorf("ping on the replaced socket: %s", got)
	}
}

func TestUnixRefusesFileAtSocketPath(t *testing.T) {
	e := newEnv(t)
	sock := filepath.Join(e.Base, "x.sock")
	os.WriteFile(sock, []byte("precious"), 0o600)
	_, errOut, code := e.Run("serve", "--transport", "unix_socket", "--socket", sock)
	if code != 1 || !strings.Contains(errOut, "not a socket") {
		t.Errorf("exit %d %s, want 1 and \"not a socket\"", code, errOut)
	}
	if b, _ := os.ReadFile(sock); string(b) != "precious" {
		t.Error("clawd replaced a regular file at the socket path")
	}
}

// TestConnectWithGoSDK drives the unix-socket daemon through `clawd
// connect` with the go-sdk client's CommandTransport, as a stdio-only host
// (Claude Code's .mcp.json) would.
func TestConnectWithGoSDK(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "unix_socket")
	cmd := e.Command("connect", "--workspace", e.WS)
	client := sdk.NewClient(&sdk.Implementation{Name: "claude-code", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect through clawd connect: %v", err)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range lt.Tools {
		found = found || tl.Name == "read_file"
	}
	if !found {
		t.Fatalf("tools/list through the bridge lacks read_file: %v", lt.Tools)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := res.StructuredContent.(map[string]any); res.IsError || !ok || m["content"] != "hello\n" {
		t.Fatalf("read_file through the bridge: %+v", res)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("clawd connect exited %d after stdin closed, want 0", code)
	}
}

func TestConnectWithoutDaemon(t *testing.T) {
	e := newEnv(t)
	_, errOut, code := e.Run("connect")
	if code != 1 || !strings.Contains(errOut, "no running clawd daemon") || !strings.Contains(errOut, "clawd serve --transport unix_socket") {
		t.Errorf("exit %d %s, want 1 with a hint to start one", code, errOut)
	}
}

// TestConnectRefusedForOtherUser runs `clawd connect` as nobody against a
// root daemon whose socket was made world-writable: the client refuses a
// daemon of another user before it sends anything, and the daemon's own
// peer-credential check alone refuses a client that does not check (a raw
// connection made as nobody).
func TestConnectRefusedForOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run clawd as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv not installed")
	}
	e := newEnv(t)
	os.Chmod(e.Base, 0o755)
	d := e.serve("--transport", "unix_socket", "--socket", filepath.Join(e.Base, "s.sock"))
	sock := filepath.Join(e.Base, "s.sock")
	os.Chmod(sock, 0o666)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		clawdBin, "connect", "--socket", sock, "--workspace", "/")
	cmd.Env = []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(initMsg + "\n")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("clawd connect as nobody: %v, stderr %s; want exit 1", err, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("nobody got data from root's daemon: %s", out.String())
	}
	if !strings.Contains(errb.String(), "served by uid 0") {
		t.Errorf("stderr %q should say the socket is served by uid 0", errb.String())
	}
	if err := syscall.Seteuid(65534); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", sock)
	if err := syscall.Seteuid(0); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("dial as nobody: %v", err)
	}
	defer c.Close()
	c.Write([]byte(initMsg + "\n"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a raw client as nobody read %d bytes, %v; want the connection closed at once", n, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(d.Stderr.String(), "peer_uid=65534") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(d.Stderr.String(), "peer runs as another user") {
		t.Errorf("the daemon did not log the refusal:\n%s", d.Stderr)
	}
}
