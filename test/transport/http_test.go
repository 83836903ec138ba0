//go:build linux || darwin

package transport_e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/test/clawdtest"
)

// Test_server_starts_on_tcp_loopback is the spec's test with the binary:
// clawd binds 127.0.0.1:7430 and `curl http://127.0.0.1:7430/health`
// returns {"status":"ok",...}. When something else holds 7430 on this
// machine the test uses a free port instead (and says so).
func Test_server_starts_on_tcp_loopback(t *testing.T) {
	e := newEnv(t)
	args := []string{"--transport", "tcp_loopback"}
	port := 7430
	if ln, err := net.Listen("tcp", "127.0.0.1:7430"); err != nil {
		t.Logf("127.0.0.1:7430 is busy on this machine (%v); using a free port", err)
		args, port = append(args, "--port", "0"), 0
	} else {
		ln.Close()
	}
	d := e.serve(args...)
	st := e.State("tcp")
	if port != 0 && st.Addr != "127.0.0.1:7430" {
		t.Errorf("bound %s, want 127.0.0.1:7430", st.Addr)
	}
	if !strings.Contains(d.Stderr.String(), "http://"+st.Addr+"/mcp") {
		t.Errorf("the address is not printed on stderr:\n%s", d.Stderr)
	}
	resp, err := http.Get("http://" + st.Addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var h map[string]any
	if err := json.Unmarshal(body, &h); err != nil || resp.StatusCode != 200 || h["status"] != "ok" {
		t.Fatalf("GET /health: HTTP %d %s", resp.StatusCode, body)
	}
	if h["pid"] != float64(d.Cmd.Process.Pid) {
		t.Errorf("pid %v, want the daemon's %d", h["pid"], d.Cmd.Process.Pid)
	}
	for _, k := range []string{"uptime_s", "mcp_version", "active_tools"} {
		if _, ok := h[k]; !ok {
			t.Errorf("health lacks %s: %s", k, body)
		}
	}
	// Only loopback: nothing listens on the other addresses of the port.
	if _, p, _ := net.SplitHostPort(st.Addr); p != "" {
		if c, err := net.DialTimeout("tcp", "[::1]:"+p, time.Second); err == nil {
			c.Close()
			t.Error("the daemon also listens on [::1] although bind_addr is 127.0.0.1")
		}
	}
}

func TestTCPSecondInstanceFailsClearly(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "tcp_loopback", "--port", "0")
	_, p, _ := net.SplitHostPort(e.State("tcp").Addr)

	// Another workspace on the same port.
	e2 := newEnv(t)
	_, errOut, code := e2.Run("serve", "--transport", "tcp_loopback", "--port", p)
	if code != 1 || !strings.Contains(errOut, "already running on http://127.0.0.1:"+p) || !strings.Contains(errOut, "--port") {
		t.Errorf("same port: exit %d %q", code, errOut)
	}
	// The same workspace on another port.
	_, errOut, code = e.Run("serve", "--transport", "tcp_loopback", "--port", "0")
	if code != 1 || !strings.Contains(errOut, "already running for this workspace") {
		t.Errorf("same workspace: exit %d %q", code, errOut)
	}
	// A port held by something that is not clawd.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p2, _ := net.SplitHostPort(ln.Addr().String())
	e3 := newEnv(t)
	_, errOut, code = e3.Run("serve", "--transport", "tcp_loopback", "--port", p2)
	if code != 1 || !strings.Contains(errOut, "already in use") {
		t.Errorf("foreign listener: exit %d %q", code, errOut)
	}
}

func TestBindAddrRejected(t *testing.T) {
	e := newEnv(t)
	e.WriteConfig("bind_addr = \"0.0.0.0\"\n")
	_, errOut, code := e.Run("serve", "--transport", "tcp_loopback", "--port", "0")
	if code != 1 || !strings.Contains(errOut, "[ERROR] MCP server: bind_0000_rejected") {
		t.Errorf("exit %d %q", code, errOut)
	}
}

func TestTokenFileAndRotation(t *testing.T) {
	e := newEnv(t)
	d := e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.State("tcp")
	wantPath := e.Home + "/.claude/hooks/.clawde-token-" + e.WorkspaceID()
	if st.TokenFile != wantPath {
		t.Errorf("token file %s, want %s", st.TokenFile, wantPath)
	}
	fi, err := os.Stat(st.TokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v mode %v, want 0600", err, fi.Mode())
	}
	old := clawdtest.ReadToken(t, st.TokenFile)
	out, _, code := e.Run("token", "show")
	if code != 0 || strings.TrimSpace(out) != old {
		t.Fatalf("token show: exit %d %q, want the token file's content", code, out)
	}
	s := clawdtest.NewHTTP(t, st.Addr, old)
	s.Initialize(initMsg)

	out, errOut, code := e.Run("token", "rotate")
	if code != 0 || !strings.Contains(out, "rotated") {
		t.Fatalf("token rotate: exit %d %s %s", code, out, errOut)
	}
	cur := clawdtest.ReadToken(t, st.TokenFile)
	if cur == old {
		t.Fatal("the token file still holds the old token")
	}
	if code, body := s.Post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != 403 || !strings.Contains(body, `"code":-32001`) {
		t.Errorf("old token after rotate: HTTP %d %s, want 403 -32001", code, body)
	}
	s.Token = cur
	if code, body := s.Post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); code != 200 {
		t.Errorf("new token (same session): HTTP %d %s", code, body)
	}
	if !strings.Contains(d.Stderr.String(), "workspace token rotated") {
		t.Error("the rotation was not logged")
	}
	if strings.Contains(d.Stderr.String(), old) || strings.Contains(d.Stderr.String(), cur) {
		t.Error("a token appears in the daemon's log")
	}
	// The token lives until the daemon exits.
	d.Stop()
	if _, err := os.Stat(st.TokenFile); !os.IsNotExist(err) {
		t.Errorf("token file left after shutdown: %v", err)
	}
	if out, errOut, code := e.Run("token", "rotate"); code != 1 || !strings.Contains(errOut, "no tcp_loopback daemon") {
		t.Errorf("rotate without a daemon: exit %d %s %s", code, out, errOut)
	}
}

func TestTokenPathFromConfig(t *testing.T) {
	e := newEnv(t)
	e.WriteConfig("token_path = \"~/tokens/ws.token\"\n")
	e.serve("--transport", "tcp_loopback", "--port", "0")
	p := e.Home + "/tokens/ws.token"
	if tok := clawdtest.ReadToken(t, p); len(tok) != 64 {
		t.Fatalf("token at token_path: %q", tok)
	}
	if out, _, code := e.Run("tools"); code != 0 || !strings.Contains(out, "read_file") {
		t.Errorf("clawd tools with a configured token_path: exit %d %s", code, out)
	}
}

func TestSessionSecretFromEnvironment(t *testing.T) {
	e := newEnv(t)
	secret := "e2e-secret-" + strings.Repeat("s", 40)
	e.Extra = []string{"CLAWDE_SESSION_SECRET=" + secret}
	d := e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.State("tcp")
	// No secret file is created when the environment provides the key.
	if _, err := os.Stat(e.Home + "/.local/share/clawde/session.secret"); !os.IsNotExist(err) {
		t.Errorf("a secret file was written although CLAWDE_SESSION_SECRET is set: %v", err)
	}
	tok := clawdtest.ReadToken(t, st.TokenFile)
	s := clawdtest.NewHTTP(t, st.Addr, tok)
	s.Initialize(initMsg)
	s.Token = "bad"
	s.Post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	d.Stop()
	for name, text := range map[string]string{"log": d.Stderr.String(), "token": tok} {
		if strings.Contains(text, secret) {
			t.Errorf("the secret appears in the %s", name)
		}
	}
	// A secret too short to be a key is refused with the variable's name.
	e2 := newEnv(t)
	e2.Extra = []string{"CLAWDE_SESSION_SECRET=short"}
	_, errOut, code := e2.Run("serve", "--transport", "tcp_loopback", "--port", "0")
	if code != 1 || !strings.Contains(errOut, "CLAWDE_SESSION_SECRET") {
		t.Errorf("short secret: exit %d %q", code, errOut)
	}
}

func TestGeneratedSecretFile(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "tcp_loopback", "--port", "0")
	fi, err := os.Stat(e.Home + "/.local/share/clawde/session.secret")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v, want mode 0600", err, fi)
	}
}

func TestBashEnvironmentHasNoSecret(t *testing.T) {
	e := newEnv(t)
	secret := "bash-env-secret-" + strings.Repeat("q", 40)
	e.Extra = []string{"CLAWDE_SESSION_SECRET=" + secret}
	e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.State("tcp")
	s := clawdtest.NewHTTP(t, st.Addr, clawdtest.ReadToken(t, st.TokenFile))
	s.Initialize(initMsg)
	code, body := s.Post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"env; cat /proc/self/environ | tr '\\0' '\\n'"}}}`)
	if code != 200 || !strings.Contains(body, "PATH=") {
		t.Fatalf("bash env: HTTP %d %s", code, body)
	}
	if strings.Contains(body, secret) || strings.Contains(body, "CLAWDE_SESSION_SECRET") {
		t.Error("the bash child sees the session secret")
	}
}

func TestCancelBashKillsProcessGroup(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.State("tcp")
	s := clawdtest.NewHTTP(t, st.Addr, clawdtest.ReadToken(t, st.TokenFile))
	s.Initialize(initMsg)
	cmd := `echo $$ > sh.pid; sleep 300 & echo $! > child.pid; wait`
	done := make(chan string, 1)
	go func() {
		_, body := s.Post(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":%q,"timeout_ms":120000}}}`, cmd))
		done <- body
	}()
	readPID := func(name string) int {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(e.WS + "/" + name); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				n, err := strconv.Atoi(strings.TrimSpace(string(b)))
				if err == nil {
					return n
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("bash did not write %s", name)
		return 0
	}
	shPID, childPID := readPID("sh.pid"), readPID("child.pid")
	if code, body := s.Post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`); code != 202 {
		t.Fatalf("cancel: HTTP %d %s", code, body)
	}
	select {
	case body := <-done:
		if !strings.Contains(body, "cancelled") {
			t.Errorf("cancelled bash answered %s", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled bash call was not answered")
	}
	deadline := time.Now().Add(5 * time.Second)
	for (pidAlive(shPID) || pidAlive(childPID)) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if pidAlive(shPID) || pidAlive(childPID) {
		t.Errorf("after the cancel: shell alive %v, its background child alive %v; the whole process group must die", pidAlive(shPID), pidAlive(childPID))
	}
}

// TestHTTPStrictWire drives the binary over loopback HTTP with messages the
// parser must refuse: ids that are not strings or integers, and objects
// whose names differ only by case at any level. Each gets 400 with a
// -32600 that names the problem; nothing is written; the session goes on.
func TestHTTPStrictWire(t *testing.T) {
	e := newEnv(t)
	e.serve("--transport", "tcp_loopback", "--port", "0")
	st := e.State("tcp")
	s := clawdtest.NewHTTP(t, st.Addr, clawdtest.ReadToken(t, st.TokenFile))
	s.Initialize(initMsg)
	write := func(id, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"write_file","arguments":` + args + `}}`
	}
	for _, tt := range []struct{ name, body, want string }{
		{"fractional id", write("1.5", `{"path":"w1","content":"x"}`),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"id\" must be a string or an integer, got 1.5`},
		{"huge exponent id", write("1e400", `{"path":"w2","content":"x"}`), `"id":null,"error":{"code":-32600,`},
		{"minus zero fraction id", write("-0.0", `{"path":"w3","content":"x"}`), `"id":null,"error":{"code":-32600,`},
		{"case variant argument", write("4", `{"path":"w4","Path":"../w4","content":"x"}`),
			`"id":4,"error":{"code":-32600,"message":"invalid request: member names \"path\" and \"Path\" in \"/params/arguments\"`},
		{"case variant tool name", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file","NAME":"bash","arguments":{"path":"w5","content":"x"}}}`,
			`"id":5,"error":{"code":-32600,"message":"invalid request: member names \"name\" and \"NAME\" in \"/params\"`},
	} {
		if code, body := s.Post(tt.body); code != 400 || !strings.Contains(body, tt.want) {
			t.Errorf("%s: HTTP %d %s\nwant 400 with %s", tt.name, code, body, tt.want)
		}
	}
	entries, _ := os.ReadDir(e.WS)
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), "w") {
			t.Errorf("a refused call wrote %s", en.Name())
		}
	}
	if code, body := s.Post(write("123456789012345678901234567890", `{"path":"ok.txt","content":"x"}`)); code != 200 ||
		!strings.HasPrefix(body, `{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":`) {
		t.Errorf("a clean call after the refusals: HTTP %d %s", code, body)
	}
}
