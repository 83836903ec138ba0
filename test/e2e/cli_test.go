package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestStdioSurvivesBadFrames sends malformed, oversized and hostile lines to
// the real binary: each gets its error and the session goes on.
func TestStdioSurvivesBadFrames(t *testing.T) {
	e := newEnv(t)
	e.Write("a.txt", "A\n")
	r := e.Stdio()
	r.Initialize("claude-code")
	// The exchanges, in order, are testdata/bad_frames.txtar.
	_, exchanges := clawdtest.ReadTxtar(t, filepath.Join("testdata", "bad_frames.txtar"))
	if len(exchanges) != 14 {
		t.Fatalf("testdata/bad_frames.txtar has %d exchanges, want 14", len(exchanges))
	}
	for _, x := range exchanges {
		send, want, ok := strings.Cut(strings.TrimSuffix(string(x.Data), "\n"), "\n")
		if !ok || strings.Contains(want, "\n") {
			t.Fatalf("exchange %q: want two lines, what to send and what the answer contains", x.Name)
		}
		send = strings.ReplaceAll(send, "<5 MiB of a>", strings.Repeat("a", 5<<20))
		got := r.Call(send)
		if !strings.Contains(got, want) {
			short := send
			if len(short) > 80 {
				short = short[:80] + "..."
			}
			t.Errorf("%s: sent %s\ngot  %.300s\nwant %s", x.Name, short, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.WS, "x")); err == nil {
		t.Error("the oversized write_file was executed")
	}
}

// Any config that binds 0.0.0.0 makes clawd exit 1
// with its exact log line.
func TestServeRejectsExternalBind(t *testing.T) {
	e := newEnv(t)
	cfg := filepath.Join(e.Home, "bind.toml")
	for _, addr := range []string{"0.0.0.0", "::", "192.168.0.1"} {
		os.WriteFile(cfg, []byte("transport = \"tcp_loopback\"\nbind_addr = \""+addr+"\"\n"), 0o600)
		_, stderr, code := e.Run("serve", "--config", cfg)
		if code != 1 {
			t.Errorf("bind_addr %s: exit %d, want 1", addr, code)
		}
		// One message, starting with the spec's log line, naming the file.
		if !strings.HasPrefix(stderr, "[ERROR] MCP server: bind_0000_rejected — external binding is forbidden") ||
			strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, cfg) {
			t.Errorf("bind_addr %s: stderr = %q", addr, stderr)
		}
	}
}

func TestInitWritesDefaultConfig(t *testing.T) {
	e := newEnv(t)
	out, stderr, code := e.Run("init")
	file := filepath.Join(e.Home, ".config", "clawde", "mcp-server.toml")
	if code != 0 || !strings.Contains(out, file) {
		t.Fatalf("init: exit %d, out %q, err %q", code, out, stderr)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, mode %v", err, fi.Mode())
	}
	original, _ := os.ReadFile(file)
	if !strings.Contains(string(original), "# policy_stub_mode = false") || !strings.Contains(string(original), `# transport = "stdio"`) {
		t.Errorf("config content:\n%s", original)
	}
	// A second init keeps the user's file.
	os.WriteFile(file, []byte("port = 9999\n"), 0o600)
	if _, stderr, code := e.Run("init"); code != 1 || !strings.Contains(stderr, "--force") {
		t.Errorf("second init: exit %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(file); string(b) != "port = 9999\n" {
		t.Error("second init changed the existing file")
	}
	if _, _, code := e.Run("init", "--force"); code != 0 {
		t.Errorf("init --force: exit %d", code)
	}
	// --force on a symlinked config writes the link's target and keeps
	// the link.
	dot := filepath.Join(e.Home, "dotfiles", "clawd.toml")
	os.MkdirAll(filepath.Dir(dot), 0o700)
	os.WriteFile(dot, []byte("port = 9999\n"), 0o600)
	os.Remove(file)
	if err := os.Symlink("../../dotfiles/clawd.toml", file); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := e.Run("init", "--force"); code != 0 {
		t.Fatalf("init --force on a symlink: exit %d %s", code, stderr)
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("init --force replaced the symlink: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(dot); string(b) != string(original) {
		t.Errorf("the link's target was not rewritten: %q", b)
	}
	// The written file is a valid config that serve accepts.
	r := e.Stdio()
	if !strings.Contains(r.Initialize("x").Raw, `"serverInfo"`) {
		t.Error("serve with the init config did not start")
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"serve", "--no-such-flag"},
		{"no-such-command"},
		{"serve", "--client", "robot"},
		{"serve", "--transport", "carrier-pigeon"},
		{"version", "extra"},
	} {
		_, stderr, code := e.Run(args...)
		if code != 2 {
			t.Errorf("clawd %v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if stderr == "" {
			t.Errorf("clawd %v: no message on stderr", args)
		}
	}
	cfg := filepath.Join(e.Home, "bad.toml")
	os.WriteFile(cfg, []byte("trasport = \"stdio\"\n"), 0o600)
	if _, stderr, code := e.Run("serve", "--config", cfg); code != 1 || !strings.Contains(stderr, "trasport") {
		t.Errorf("bad config: exit %d, stderr %q; want 1 naming the key", code, stderr)
	}
	if out, _, code := e.Run("version"); code != 0 || !strings.HasPrefix(out, "clawd ") {
		t.Errorf("version: %d %q", code, out)
	}
}

// SIGTERM ends a stdio server promptly even while its host keeps stdin open,
// and kills the process group of a running bash call on the way out.
func TestStdioStopsOnSIGTERM(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows cannot send SIGTERM to another process")
	}
	e := newEnv(t)
	r := e.Stdio()
	r.Initialize("claude-code")
	r.SendLine(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 60 & echo $! > bg.pid; wait","timeout_ms":60000}}}`)
	bg := waitPid(t, filepath.Join(e.WS, "bg.pid"))
	start := time.Now()
	r.Cmd.Process.Signal(syscall.SIGTERM)
	if !r.Exited(5 * time.Second) {
		t.Fatal("clawd serve ignored SIGTERM with stdin open")
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("stopping took %v", d)
	}
	waitGone(t, bg)
}

// A descriptor clawd's parent leaked into it does not reach bash children.
func TestInheritedDescriptorsDoNotReachBash(t *testing.T) {
	e := newEnv(t)
	leaked, err := os.Open(filepath.Join(e.outside, "secret.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer leaked.Close()
	cmd := e.Command("serve")
	cmd.ExtraFiles = []*os.File{leaked} // fd 3 in clawd, without close-on-exec
	r := clawdtest.StartChild(t, cmd)
	r.Initialize("claude-code")
	resp := r.CallTool("bash", map[string]any{"command": "cat <&3; ls /proc/self/fd"})
	if resp.Result == nil {
		t.Fatalf("bash: %s", resp.Raw)
	}
	sc := resp.Result.StructuredContent
	if strings.Contains(resp.Raw, "TOP SECRET") {
		t.Fatal("bash read a descriptor clawd inherited")
	}
	if fds := strings.Fields(sc["stdout"].(string)); len(fds) > 4 { // 0 1 2 and ls's own directory fd
		t.Errorf("bash sees descriptors %v", fds)
	}
}

// `clawd mcp test` starts the server itself, outside any daemon: a
// descriptor its own caller leaked into it does not reach the server
// either.
func TestInheritedDescriptorsDoNotReachMCPTest(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	e := newEnv(t)
	secret := filepath.Join(e.outside, "secret.txt")
	leaked, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer leaked.Close()
	pidFile := filepath.Join(e.Base, "probe.pid")
	e.MustRun("mcp", "add", "probe", "--stdio", "--disabled", "--allow", "--", fakeUpstream(t), "-list-delay", "3s", "-pid-file", pidFile)
	cmd := e.Command("mcp", "test", "probe")
	// fds 3 to 7 in clawd, without close-on-exec (on Linux the server's
	// own fd 3 is its executable, which hides a leak there).
	cmd.ExtraFiles = []*os.File{leaked, leaked, leaked, leaked, leaked}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never started")
		}
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	var fds []string
	for _, ent := range ents {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, ent.Name()))
		fds = append(fds, ent.Name()+" -> "+target)
		if target == secret {
			t.Errorf("the server holds the descriptor clawd inherited: fd %s", ent.Name())
		}
	}
	if t.Failed() {
		t.Logf("the server's descriptors: %v", fds)
	}
}

// A bash call's commands get SIGPIPE's default action, as from a terminal:
// clawd must not ignore the signal itself (an ignored signal stays ignored
// across exec), or `yes | head -1` ends with "Broken pipe" errors, and a
// shell loop writing into a closed pipe spins until the call's timeout.
func TestBashGetsDefaultSIGPIPE(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGPIPE")
	}
	e := newEnv(t)
	r := e.Stdio()
	r.Initialize("claude-code")
	resp := r.CallTool("bash", map[string]any{
		"command":    "yes | head -c 1 >/dev/null; while :; do echo y; done | head -c 1 >/dev/null; echo loop ended; grep SigIgn /proc/self/status 2>/dev/null",
		"timeout_ms": 10000,
	})
	if resp.Result == nil {
		t.Fatalf("bash: %s", resp.Raw)
	}
	sc := resp.Result.StructuredContent
	stdout, _ := sc["stdout"].(string)
	stderr, _ := sc["stderr"].(string)
	if sc["timed_out"] == true || !strings.Contains(stdout, "loop ended") {
		t.Fatalf("a writer into a closed pipe was not ended by SIGPIPE (timed out %v); stderr begins %q", sc["timed_out"], stderr[:min(len(stderr), 200)])
	}
	if strings.Contains(stderr, "Broken pipe") {
		t.Errorf("SIGPIPE is ignored in bash's children: %q", stderr)
	}
	if _, v, ok := strings.Cut(stdout, "SigIgn:"); ok {
		mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			t.Fatalf("SigIgn %q: %v", v, err)
		}
		if mask&(1<<(int(syscall.SIGPIPE)-1)) != 0 {
			t.Errorf("bash's children ignore SIGPIPE (SigIgn %016x)", mask)
		}
	}
}

// The commands that change state answer --json with one JSON document on
// stdout, like the rest: trust set and rm, mcp disallow, audit prune.
func TestChangeCommandsAnswerJSON(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	set := mustJSON[map[string]any](t, e.MustRun("trust", "set", "device:phone1", "1", "--deny", "search", "--json"))
	if set["entity_id"] != "device:phone1" || set["trust_level"] != float64(1) ||
		set["permissions"].(map[string]any)["search"] != "deny" {
		t.Errorf("trust set --json: %v", set)
	}
	if rm := mustJSON[map[string]any](t, e.MustRun("trust", "rm", "device:phone1", "--json")); rm["entity_id"] != "device:phone1" || rm["removed"] != true {
		t.Errorf("trust rm --json: %v", rm)
	}
	sum := strings.Repeat("ab", 32)
	e.MustRun("mcp", "allow", "--server", "gone", "--sha256", sum)
	if d := mustJSON[map[string]any](t, e.MustRun("mcp", "disallow", "--server", "gone", "--json")); d["server"] != "gone" || d["removed"] != float64(1) {
		t.Errorf("mcp disallow --json: %v", d)
	}
	if p := mustJSON[map[string]any](t, e.MustRun("audit", "prune", "--older-than", "1h", "--json")); p["deleted"] != float64(0) || p["before"] == "" {
		t.Errorf("audit prune --json: %v", p)
	}
}
