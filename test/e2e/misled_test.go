package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/test/clawdtest"
)

// Messages a new user meets first: each names the flag and the fix, and
// usage errors exit 2.
func TestCLIMessagesNameTheFix(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		args    []string
		code    int
		want    string
		notWant string
	}{
		{[]string{"--version"}, 0, "clawd 0.", ""},
		{[]string{"call"}, 2, "clawd call needs the name of a tool", "accepts 1 arg"},
		{[]string{"call", "a", "b"}, 2, `unexpected argument "b"`, "accepts 1 arg"},
		{[]string{"serve", "--port", "abc"}, 2, `--port "abc": expected a whole number`, "strconv"},
		{[]string{"serve", "--port", "99999999999999999999"}, 2, "expected a smaller whole number", "strconv"},
		{[]string{"serve", "--port", "9000"}, 2, "--port applies only to --transport tcp_loopback, but the transport is stdio", ""},
		{[]string{"serve", "--transport", "stdio", "--socket", "/tmp/x.sock"}, 2, "--socket applies only to --transport unix_socket", ""},
		{[]string{"serve", "--transport", "tcp_loopback", "--client", "cc"}, 2, "--client applies only to --transport stdio", ""},
	}
	for _, tt := range tests {
		out, stderr, code := e.Run(tt.args...)
		both := out + stderr
		if code != tt.code || !strings.Contains(both, tt.want) || (tt.notWant != "" && strings.Contains(both, tt.notWant)) {
			t.Errorf("clawd %v: exit %d, output %q; want exit %d with %q", tt.args, code, both, tt.code, tt.want)
		}
	}
	// A transport flag that fits a transport set in the config is refused
	// against that transport too.
	cfg := filepath.Join(e.Home, "sock.toml")
	os.WriteFile(cfg, []byte("transport = \"unix_socket\"\n"), 0o600)
	if _, stderr, code := e.Run("serve", "--config", cfg, "--port", "9000"); code != 2 || !strings.Contains(stderr, "the transport is unix_socket") {
		t.Errorf("--port with a unix_socket config: exit %d, %q", code, stderr)
	}
}

// `clawd serve` on stdio says what it serves and as whom, and "~" in
// --workspace is the home directory.
func TestServeStdioSaysWhatItServes(t *testing.T) {
	e := newEnv(t)
	proj := filepath.Join(e.Home, "proj")
	os.MkdirAll(proj, 0o700)
	cmd := e.Command("serve", "--workspace", "~/proj", "--client", "cc")
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil { // stdin is empty: the session ends at once
		t.Fatalf("serve: %v\n%s", err, errb.String())
	}
	want := "clawd: serving MCP on stdio (workspace " + proj + ") as entity cc:" + config.WorkspaceID(proj)
	if lines := strings.Split(strings.TrimSpace(errb.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
		t.Errorf("stderr = %q, want one line starting %q", errb.String(), want)
	}
}

// `clawd tools` with nothing callable says why and what to run.
func TestToolsEmptySaysWhy(t *testing.T) {
	e := newEnv(t)
	entity := "local:" + config.WorkspaceID(e.WS)
	if _, stderr, code := e.Run("trust", "set", entity, "0"); code != 0 {
		t.Fatalf("trust set: %d %s", code, stderr)
	}
	e.Daemon("unix_socket")
	out, stderr, code := e.Run("tools")
	if code != 1 || out != "" || !strings.Contains(stderr, entity+" has trust level 0") || !strings.Contains(stderr, "fix: clawd trust set "+entity+" 1") {
		t.Errorf("tools: exit %d, out %q, err %q", code, out, stderr)
	}
}

// Without XDG_RUNTIME_DIR the socket lives in a 0700 directory of the
// user's own under TMPDIR, and a client refuses that directory when it
// belongs to someone else.
func TestSocketFallbackDirPerUser(t *testing.T) {
	e := newEnv(t)
	tmp := filepath.Join(e.Base, "tmp")
	os.Mkdir(tmp, 0o777)
	var env []string
	for _, kv := range e.Environ() {
		if !strings.HasPrefix(kv, "XDG_RUNTIME_DIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+tmp)
	dir := filepath.Join(tmp, fmt.Sprintf("clawd-%d", os.Getuid()))
	serve := e.Command("serve", "--transport", "unix_socket")
	serve.Env = env
	d := clawdtest.ServeDaemon(t, serve)
	sock := filepath.Join(dir, "clawd."+config.WorkspaceID(e.WS)+".sock")
	if !strings.Contains(d.Stderr.String(), sock) {
		t.Fatalf("stderr %q does not name %s", d.Stderr.String(), sock)
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("fallback dir: %v %v", fi, err)
	}
	health := e.Command("health")
	health.Env = env
	if out, err := health.CombinedOutput(); err != nil {
		t.Fatalf("health through the fallback socket: %v\n%s", err, out)
	}
	if os.Getuid() != 0 {
		return
	}
	// Root can play the other user: the same directory, now foreign.
	os.Chown(dir, 12345, 12345)
	defer os.Chown(dir, 0, 0)
	health = e.Command("health")
	health.Env = env
	out, err := health.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "belongs to uid 12345") {
		t.Errorf("health with a foreign fallback dir: %v\n%s", err, out)
	}
}

// `clawd token show` is quiet while the daemon that wrote the token runs,
// and warns, still printing the token, once that daemon crashed.
func TestTokenShowWarnsWhenStale(t *testing.T) {
	e := newEnv(t)
	d := e.Serve("--transport", "tcp_loopback", "--port", "0")
	out, stderr, code := e.Run("token", "show")
	if code != 0 || strings.TrimSpace(out) == "" || stderr != "" {
		t.Fatalf("token show with a live daemon: exit %d, out %q, err %q", code, out, stderr)
	}
	d.Kill() // no cleanup: the state and token files stay
	out2, stderr, code := e.Run("token", "show")
	if code != 0 || out2 != out || !strings.Contains(stderr, "left from one that stopped or crashed") {
		t.Errorf("token show after a crash: exit %d, out %q, err %q", code, out2, stderr)
	}
}
