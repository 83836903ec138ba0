// Package clients installs clawd into the real Claude Code and OpenCode
// CLIs with `clawd install` and asks each client whether it connects
// (`claude mcp list`, `opencode mcp list`, which health-check servers
// without a network), and drives clawd with the official TypeScript SDK
// v2 client in both protocol eras (tssdk_test.go). The clients come from
// npm, cached in
// $HOME/.cache/clawd-test-npm (.ci/run installs them there; see
// npmPackages); without them the tests skip and say how to get them.
package clients

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// npmPackages are the client versions the tests were written against.
const npmPackages = "@anthropic-ai/claude-code@2.1.332 opencode-ai@1.18.33 @modelcontextprotocol/client@2.4.0"

var clawdBin string

func TestMain(m *testing.M) { os.Exit(clawdtest.Main(m, &clawdBin)) }

// clientBin finds a client CLI in $CLAWD_TEST_NPM (default
// $HOME/.cache/clawd-test-npm)/node_modules/.bin and checks that it runs.
func clientBin(t *testing.T, name string) string {
	t.Helper()
	dir := npmDir()
	p := filepath.Join(dir, "node_modules", ".bin", name)
	if out, err := exec.Command(p, "--version").CombinedOutput(); err != nil {
		t.Skipf("%s is not installed or does not run here (%v %s); install with: npm install --prefix %s %s",
			name, err, bytes.TrimSpace(out), dir, npmPackages)
	}
	return p
}

// npmDir is where the npm clients are: $CLAWD_TEST_NPM, default
// $HOME/.cache/clawd-test-npm.
func npmDir() string {
	if dir := os.Getenv("CLAWD_TEST_NPM"); dir != "" {
		return dir
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "clawd-test-npm")
}

// world is clawdtest's isolated user, with clawd and the clients on PATH
// as a user would have them, their caches and updaters kept in the test's
// home, and a config naming a free port.
type world struct {
	*clawdtest.Env
	port int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{Env: clawdtest.NewEnv(t, clawdBin)}
	if err := os.MkdirAll(filepath.Join(w.Home, ".config", "clawde"), 0o700); err != nil {
		t.Fatal(err)
	}
	w.Extra = []string{"PATH=" + filepath.Dir(clawdBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"XDG_STATE_HOME=" + filepath.Join(w.Home, ".local", "state"), "XDG_CACHE_HOME=" + filepath.Join(w.Home, ".cache"),
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1", "NO_COLOR=1"}
	w.port = freePort(t)
	w.write(w.ConfigFile(), fmt.Sprintf("port = %d\n", w.port))
	w.run("git", "init", "-q", w.WS)
	return w
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// write creates the file at absolute path p (and its parents).
func (w *world) write(p, s string) {
	w.T.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		w.T.Fatal(err)
	}
}

// cmd is any program (a client, git, a hook) in the world's environment,
// run from the workspace.
func (w *world) cmd(name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Dir, c.Env = w.WS, w.Environ()
	return c
}

// run runs a program that must succeed and returns its combined output.
func (w *world) run(name string, args ...string) string {
	w.T.Helper()
	out, err := w.cmd(name, args...).CombinedOutput()
	if err != nil {
		w.T.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// daemons starts the workspace's unix-socket and loopback HTTP daemons.
func (w *world) daemons() {
	w.Serve("--transport", "unix_socket")
	w.Serve("--transport", "tcp_loopback")
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// serverLine returns the line(s) a client's list prints about clawd.
func serverLine(out string) string {
	out = ansi.ReplaceAllString(out, "")
	var keep []string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.Contains(l, "clawd") && !strings.Contains(l, "Conflicting") {
			keep = append(keep, strings.TrimSpace(l))
			if i+1 < len(lines) {
				keep = append(keep, strings.TrimSpace(lines[i+1]))
			}
		}
	}
	return strings.Join(keep, " | ")
}

func readOrNil(p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return b
}

func TestClaudeCodeConnects(t *testing.T) {
	claude := clientBin(t, "claude")
	w := newWorld(t)
	// The user trusted this folder in Claude Code once (its trust dialog);
	// clawd never writes that.
	w.write(filepath.Join(w.Home, ".claude.json"), fmt.Sprintf("{\n  \"projects\": {\n    %q: {\"hasTrustDialogAccepted\": true}\n  }\n}\n", w.WS))
	mcpJSON := filepath.Join(w.WS, ".mcp.json")
	// .mcp.json is strict JSON: odd spacing, but no comments.
	orig := "{\n  \"mcpServers\": {\n    \"other\":   { \"command\": \"true\" }\n  }\n}\n"
	w.write(mcpJSON, orig)
	w.daemons()
	for _, tr := range []string{"stdio", "unix_socket", "tcp_loopback"} {
		w.run(clawdBin, "install", "claude-code", "--transport", tr)
		ctx := time.Now()
		out := w.run(claude, "mcp", "list")
		line := serverLine(out)
		if !strings.Contains(line, "Connected") {
			t.Fatalf("%s: claude mcp list does not say Connected for clawd:\n%s", tr, out)
		}
		t.Logf("%s: %s (%v)", tr, line, time.Since(ctx).Round(time.Millisecond))
	}
	w.run(clawdBin, "uninstall", "claude-code")
	if got := readOrNil(mcpJSON); string(got) != orig {
		t.Fatalf(".mcp.json not restored:\n%q\n%q", orig, got)
	}
	if b := readOrNil(filepath.Join(w.WS, ".claude", "settings.local.json")); b != nil {
		t.Fatalf("settings.local.json clawd created is still there:\n%s", b)
	}
}

func TestClaudeCodeUserScopeAndHook(t *testing.T) {
	claude := clientBin(t, "claude")
	w := newWorld(t)
	w.write(filepath.Join(w.Home, ".claude.json"), fmt.Sprintf("{\n  \"projects\": {\n    %q: {\"hasTrustDialogAccepted\": true}\n  }\n}\n", w.WS))
	w.run(clawdBin, "install", "claude-code", "--user", "--transport", "unix_socket", "--hook")
	// The hook starts the daemon (none runs yet) and exports its socket.
	envFile := filepath.Join(w.Home, "claude-env")
	hook := w.cmd("sh", filepath.Join(w.Home, ".claude", "hooks", "clawde-session-start.sh"))
	hook.Env = append(hook.Env, "CLAUDE_ENV_FILE="+envFile, "CLAUDE_PROJECT_DIR="+w.WS)
	if out, err := hook.CombinedOutput(); err != nil {
		t.Fatalf("hook: %v\n%s", err, out)
	}
	exported := string(readOrNil(envFile))
	if !strings.Contains(exported, "export CLAWDE_MCP_SOCKET_PATH='") || !strings.Contains(exported, ".sock'") {
		t.Fatalf("hook exported %q", exported)
	}
	defer stopDaemon(t, w)
	out := w.run(claude, "mcp", "list")
	if !strings.Contains(serverLine(out), "Connected") {
		t.Fatalf("user-scope socket entry not Connected:\n%s", out)
	}
	w.run(clawdBin, "uninstall", "claude-code", "--user")
	after := readOrNil(filepath.Join(w.Home, ".claude.json"))
	// Claude Code rewrites ~/.claude.json itself (caches, ids), so only the
	// entry's absence is certain here; the byte-exact restore is proven in
	// the project test and the unit tests.
	if bytes.Contains(after, []byte(`"clawd"`)) {
		t.Fatalf("entry left in ~/.claude.json:\n%s", after)
	}
	if b := readOrNil(filepath.Join(w.Home, ".claude", "hooks", "clawde-session-start.sh")); b != nil {
		t.Fatal("hook script left behind")
	}
}

// stopDaemon ends the daemon the hook started, by the pid its health names.
func stopDaemon(t *testing.T, w *world) {
	out, err := w.cmd(clawdBin, "health").CombinedOutput()
	if err != nil {
		return
	}
	var pid int
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "pid:") {
			fmt.Sscan(strings.TrimSpace(l[len("pid:"):]), &pid)
		}
	}
	if pid > 0 {
		if p, err := os.FindProcess(pid); err == nil {
			p.Signal(syscall.SIGTERM)
		}
	}
}

func TestOpenCodeConnects(t *testing.T) {
	opencode := clientBin(t, "opencode")
	w := newWorld(t)
	cfg := filepath.Join(w.WS, "opencode.json")
	orig := "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  // comments are fine in OpenCode's config\n  \"mcp\": {\n    \"off\": {\"type\": \"local\", \"command\": [\"true\"], \"enabled\": false},\n  },\n}\n"
	w.write(cfg, orig)
	w.daemons()
	for _, tr := range []string{"stdio", "unix_socket", "tcp_loopback"} {
		w.run(clawdBin, "install", "opencode", "--transport", tr)
		out := w.run(opencode, "mcp", "list")
		line := serverLine(out)
		if !strings.Contains(line, "connected") || strings.Contains(line, "failed") {
			t.Fatalf("%s: opencode mcp list does not say connected for clawd:\n%s\n%s", tr, out, readOrNil(cfg))
		}
		t.Logf("%s: %s", tr, line)
	}
	w.run(clawdBin, "uninstall", "opencode")
	if got := readOrNil(cfg); string(got) != orig {
		t.Fatalf("opencode.json not restored:\n%q\n%q", orig, got)
	}
}
