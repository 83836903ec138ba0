//go:build linux || darwin

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawde/clawd/internal/config"
)

type doctorCheck struct {
	Area   string         `json:"area"`
	Status string         `json:"status"`
	What   string         `json:"what"`
	Fix    string         `json:"fix"`
	Info   map[string]any `json:"info"`
}

// doctor runs `clawd doctor --json` with PATH set to path and returns the
// exit code and the checks.
func (e *env) doctor(path string, args ...string) (int, []doctorCheck) {
	e.T.Helper()
	cmd := e.Command(append([]string{"doctor", "--json"}, args...)...)
	for i, kv := range cmd.Env {
		if strings.HasPrefix(kv, "PATH=") {
			cmd.Env[i] = "PATH=" + path
		}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(interface{ ExitCode() int })
		if !ok {
			e.T.Fatal(err)
		}
		code = ee.ExitCode()
	}
	var rep struct {
		OK     bool          `json:"ok"`
		Checks []doctorCheck `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		e.T.Fatalf("doctor --json: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if rep.OK != (code == 0) {
		e.T.Errorf("ok %v with exit %d", rep.OK, code)
	}
	return code, rep.Checks
}

// find returns the first check of area whose text contains sub.
func find(checks []doctorCheck, area, sub string) *doctorCheck {
	for i, c := range checks {
		if c.Area == area && strings.Contains(c.What, sub) {
			return &checks[i]
		}
	}
	return nil
}

func wantCheck(t *testing.T, checks []doctorCheck, area, status, sub, fix string) {
	t.Helper()
	c := find(checks, area, sub)
	if c == nil || c.Status != status || !strings.Contains(c.Fix, fix) {
		t.Errorf("no %s check %q with %q and fix %q in:\n%+v", status, area, sub, fix, checks)
	}
}

// TestDoctor walks through each problem doctor reports, from a healthy
// setup: each breaks one thing, doctor names it with a fix and exits 1.
func TestDoctor(t *testing.T) {
	e := newEnv(t)
	binDir := filepath.Dir(clawdBin)
	good := binDir + string(os.PathListSeparator) + os.Getenv("PATH")
	id := config.WorkspaceID(e.WS)
	os.WriteFile(filepath.Join(e.WS, ".mcp.json"), []byte(`{"mcpServers": {
		"clawd": {"command": "clawd", "args": ["serve", "--transport", "stdio", "--client", "cc"]},
		"other": {"command": "npx", "args": ["some-server"]}}}`), 0o600)

	// Healthy: clawd on PATH, defaults, seeded trust rows, a current entry.
	code, checks := e.doctor(good)
	if code != 0 {
		t.Fatalf("healthy setup: exit %d\n%+v", code, checks)
	}
	wantCheck(t, checks, "path", "ok", clawdBin, "")
	wantCheck(t, checks, "workspace", "ok", "id "+id, "")
	wantCheck(t, checks, "trust", "ok", "entity local:"+id+": trust level 2", "")
	wantCheck(t, checks, "trust", "ok", "entity cc:"+id+": trust level 3", "") // the entry's --client cc
	wantCheck(t, checks, "client", "ok", `claude-code entry "clawd" in `+filepath.Join(e.WS, ".mcp.json"), "")
	if find(checks, "client", `"other"`) != nil {
		t.Error("doctor reported another server's entry")
	}
	if find(checks, "trust", "decision journal") != nil {
		t.Errorf("healthy setup: doctor found the audit journal unwritable:\n%+v", checks)
	}
	out, _, code := e.Run("doctor") // the text form, with clawd on the test's PATH or not
	if !strings.Contains(out, "ok    workspace") {
		t.Errorf("doctor text: exit %d\n%s", code, out)
	}

	// clawd not on PATH.
	code, checks = e.doctor("/nonexistent")
	if code != 1 {
		t.Errorf("without clawd on PATH: exit %d", code)
	}
	wantCheck(t, checks, "path", "fail", "clawd is not on PATH", "add "+binDir+" to PATH")

	// An entry that does not pin the transport, a JSONC OpenCode entry
	// that does, and an HTTP entry where nothing runs.
	os.WriteFile(filepath.Join(e.WS, ".mcp.json"), []byte(`{"mcpServers": {"clawd": {"command": "clawd", "args": ["serve"]}}}`), 0o600)
	os.WriteFile(filepath.Join(e.WS, "opencode.json"), []byte("{\n // comment\n \"mcp\": {\"clawd\": {\"type\": \"local\", \"command\": [\"clawd\", \"serve\", \"--transport\", \"stdio\", \"--client\", \"oc\"]}}}"), 0o600)
	os.MkdirAll(filepath.Join(e.WS, ".vscode"), 0o700)
	os.WriteFile(filepath.Join(e.WS, ".vscode", "mcp.json"), []byte(`{"servers": {"clawd-http": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}`), 0o600)
	code, checks = e.doctor(good)
	if code != 1 {
		t.Errorf("stale entries: exit %d", code)
	}
	wantCheck(t, checks, "client", "fail", "runs `clawd serve`, which does not pin", "clawd install claude-code")
	wantCheck(t, checks, "client", "ok", `opencode entry "clawd"`, "")
	wantCheck(t, checks, "client", "fail", "points at http://127.0.0.1:1/mcp, where no clawd daemon runs", "clawd install vscode")
	wantCheck(t, checks, "trust", "ok", "entity oc:"+id, "")
	os.Remove(filepath.Join(e.WS, ".vscode", "mcp.json"))
	os.Remove(filepath.Join(e.WS, "opencode.json"))
	os.WriteFile(filepath.Join(e.WS, ".mcp.json"), []byte(`{"mcpServers": {"clawd": {"command": "clawd", "args": ["connect"]}}}`), 0o600)

	// An entity without a trust row.
	if _, stderr, code := e.Run("trust", "rm", "local:*"); code != 0 {
		t.Fatalf("trust rm: %s", stderr)
	}
	code, checks = e.doctor(good)
	if code != 1 {
		t.Errorf("no trust row: exit %d", code)
	}
	wantCheck(t, checks, "trust", "fail", "entity local:"+id+" has no trust row", "clawd trust set local:"+id)
	e.Run("trust", "set", "local:*", "2")

	// No decision journal can be created (a file where its directory
	// goes): every call would be refused, so doctor fails and says where.
	journal := e.DBFile() + ".audit"
	os.RemoveAll(journal)
	os.WriteFile(journal, nil, 0o600)
	code, checks = e.doctor(good)
	if code != 1 {
		t.Errorf("unwritable audit journal: exit %d", code)
	}
	wantCheck(t, checks, "trust", "fail", "decision journal cannot be written in "+journal, "check "+journal)
	os.Remove(journal)

	// An invalid config file: named, with the key.
	cfg := filepath.Join(e.Home, ".config", "clawde", "mcp-server.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte("trasport = \"stdio\"\n"), 0o600)
	code, checks = e.doctor(good)
	if code != 1 {
		t.Errorf("bad config: exit %d", code)
	}
	wantCheck(t, checks, "config", "fail", cfg, "clawd init --force")
	if c := find(checks, "config", cfg); c == nil || !strings.Contains(c.What, "trasport") {
		t.Errorf("the config check does not name the key: %+v", c)
	}
	// A switch of an upstream server's tool is the daemon's to check (it
	// knows the configured servers); a name of no tool at all is not.
	os.WriteFile(cfg, []byte("[tools]\nev__echo = false\n"), 0o600)
	if _, checks = e.doctor(good); find(checks, "config", "unknown tool") != nil {
		t.Errorf("doctor refuses a switch of an upstream tool: %+v", find(checks, "config", "unknown tool"))
	}
	os.WriteFile(cfg, []byte("[tools]\nbsh = false\n"), 0o600)
	if _, checks = e.doctor(good); find(checks, "config", "[tools] bsh: unknown tool") == nil {
		t.Errorf("doctor takes a switch of no tool: %+v", checks)
	}
	os.Remove(cfg)

	// Daemons: one that answers, with its token file; one that stopped
	// answering (SIGSTOP); one that crashed (state file left behind).
	_, st := e.Daemon("tcp_loopback", "--port", "0")
	sock := e.Serve("--transport", "unix_socket")
	// An HTTP entry at the running daemon is current; a client file that
	// is a symlink to an endless device is refused, not read forever.
	os.WriteFile(filepath.Join(e.WS, ".vscode", "mcp.json"), []byte(`{"servers": {"c": {"type": "http", "url": "http://`+st.Addr+`/mcp"}}}`), 0o600)
	os.MkdirAll(filepath.Join(e.WS, ".cursor"), 0o700)
	os.Symlink("/dev/zero", filepath.Join(e.WS, ".cursor", "mcp.json"))
	code, checks = e.doctor(good)
	wantCheck(t, checks, "client", "ok", "reaches the running daemon at http://"+st.Addr+"/mcp", "")
	wantCheck(t, checks, "client", "warn", "not a regular file", "")
	if code != 0 {
		t.Errorf("running daemons: exit %d\n%+v", code, checks)
	}
	wantCheck(t, checks, "daemon", "ok", "tcp daemon on http://127.0.0.1:", "")
	wantCheck(t, checks, "daemon", "ok", "unix daemon on "+filepath.Join(e.Home, "run", "clawd."+id+".sock"), "")
	wantCheck(t, checks, "token", "ok", "workspace token "+filepath.Join(e.Home, ".claude", "hooks", ".clawde-token-"+id)+", written", "")

	sock.Cmd.Process.Signal(syscall.SIGSTOP)
	code, checks = e.doctor(good)
	sock.Cmd.Process.Signal(syscall.SIGCONT)
	if code != 1 {
		t.Errorf("a stopped daemon: exit %d", code)
	}
	wantCheck(t, checks, "daemon", "fail", "does not answer", "kill ")

	sock.Kill()
	code, checks = e.doctor(good)
	if code != 0 {
		t.Errorf("a crashed daemon is a warning, not a failure: exit %d", code)
	}
	wantCheck(t, checks, "daemon", "warn", "is gone; its state file was left behind", "remove ")
}
