package hostadapter

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// existing is a config each client might already have: other servers,
// comments where the format allows them, odd formatting.
var existing = map[string]string{
	"claude-code":    "{\n  \"mcpServers\": {\n    \"git\": { \"command\": \"git-mcp\", \"args\": [] }\n  },\n  \"other\": true\n}\n",
	"opencode":       "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  // my model\n  \"model\": \"x/y\",\n  \"mcp\": {\n    \"fs\": {\"type\": \"local\", \"command\": [\"fs\"]}, /* keep */\n  },\n}\n",
	"cursor":         "{\"mcpServers\":{\"a\":{\"command\":\"a\"}}}",
	"vscode":         "// VS Code MCP\n{\n\t\"servers\": {\n\t\t\"gh\": {\"type\": \"http\", \"url\": \"https://x\"}, // remote\n\t},\n\t\"inputs\": []\n}\n",
	"claude-desktop": "{\n    \"mcpServers\": {},\n    \"globalShortcut\": \"\"\n}",
}

func testOptions(t *testing.T, scope Scope, transport string) Options {
	dir := t.TempDir()
	o := Options{Workspace: filepath.Join(dir, "proj"), Home: filepath.Join(dir, "home"), ConfigDir: filepath.Join(dir, "home", ".config"),
		Scope: scope, Transport: transport, Command: "clawd", URL: "http://127.0.0.1:7430/mcp",
		CredentialFile: filepath.Join(dir, "home", ".claude", "hooks", ".clawde-token-proj.oc")}
	for _, d := range []string{o.Workspace, o.Home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

func TestInstallUninstallEveryClient(t *testing.T) {
	for _, name := range Names() {
		a, _ := Lookup(name)
		for _, scope := range a.Scopes() {
			for _, tr := range []string{Stdio, UnixSocket, TCPLoopback} {
				for _, pre := range []bool{true, false} {
					t.Run(strings.Join([]string{name, string(scope), tr, map[bool]string{true: "existing", false: "new"}[pre]}, "/"), func(t *testing.T) {
						o := testOptions(t, scope, tr)
						e, err := a.Entry(o)
						if tr == TCPLoopback && (name != "claude-code" && name != "opencode") {
							if err == nil {
								t.Fatal("tcp_loopback accepted for a client that cannot read a credential fresh")
							}
							return
						}
						if err != nil {
							t.Fatal(err)
						}
						checkEntry(t, name, tr, o, e.Value)
						var orig []byte
						if pre {
							orig = []byte(existing[name])
							os.MkdirAll(filepath.Dir(e.File), 0o755)
							if err := os.WriteFile(e.File, orig, 0o640); err != nil {
								t.Fatal(err)
							}
						}
						install(t, a, o)
						got, _ := os.ReadFile(e.File)
						if st, _ := os.Stat(e.File); !pre && scope == User && st.Mode().Perm() != 0o600 {
							t.Fatalf("user file created with mode %v, want 0600", st.Mode().Perm())
						}
						if v, ok, err := GetMember(got, e.Path, ServerName); !ok || err != nil || !bytes.Equal(v, e.Value) {
							t.Fatalf("entry not in %s: %v %v\n%s", e.File, ok, err, got)
						}
						if pre {
							if b, _ := os.ReadFile(e.File + BackupSuffix); !bytes.Equal(b, orig) {
								t.Fatal("backup is not the original")
							}
							if st, _ := os.Stat(e.File); st.Mode().Perm() != 0o640 {
								t.Fatalf("mode changed to %v", st.Mode())
							}
							checkOthersKept(t, orig, got, e.Path)
						}
						// Idempotent.
						if c, err := PlanInstall(a, o); err != nil || c.Changed() {
							t.Fatalf("second install would change the file: %v\n%s", err, Diff(e.File, c.Before, c.After))
						}
						c, err := PlanUninstall(e.File, e.Path, "")
						if err != nil {
							t.Fatal(err)
						}
						if err := Apply(c); err != nil {
							t.Fatal(err)
						}
						after, err := os.ReadFile(e.File)
						if pre && !bytes.Equal(after, orig) {
							t.Fatalf("uninstall did not restore the original bytes:\n%q\n%q", orig, after)
						}
						if !pre && err == nil {
							t.Fatalf("file clawd created is still there:\n%s", after)
						}
						if _, err := os.Stat(e.File + BackupSuffix); err == nil {
							t.Fatal("backup left after an exact restore")
						}
					})
				}
			}
		}
	}
}

func install(t *testing.T, a Adapter, o Options) {
	t.Helper()
	c, err := PlanInstall(a, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(c); err != nil {
		t.Fatal(err)
	}
}

// checkOthersKept: every other server and top-level key, and every comment,
// is still in the file.
func checkOthersKept(t *testing.T, orig, got []byte, path []string) {
	t.Helper()
	for _, c := range []string{"// my model", "/* keep */", "// VS Code MCP", "// remote"} {
		if bytes.Contains(orig, []byte(c)) && !bytes.Contains(got, []byte(c)) {
			t.Fatalf("lost comment %q:\n%s", c, got)
		}
	}
	var before, after map[string]any
	sb, _ := hujson.Standardize(append([]byte(nil), orig...))
	sa, _ := hujson.Standardize(append([]byte(nil), got...))
	json.Unmarshal(sb, &before)
	json.Unmarshal(sa, &after)
	servers := after[path[0]].(map[string]any)
	delete(servers, ServerName)
	if len(servers) == 0 && before[path[0]] != nil && len(before[path[0]].(map[string]any)) == 0 {
		after[path[0]] = before[path[0]]
	}
	bj, _ := json.Marshal(before)
	aj, _ := json.Marshal(after)
	if !bytes.Equal(bj, aj) {
		t.Fatalf("other content changed:\n%s\n%s", bj, aj)
	}
}

// checkEntry pins what each entry must say: stdio pins --transport stdio
// and the client's kind; socket entries bridge with the kind's credential;
// HTTP entries read the credential, never contain one.
func checkEntry(t *testing.T, name, tr string, o Options, v []byte) {
	t.Helper()
	s := string(v)
	kind := map[string]string{"claude-code": "cc", "opencode": "oc"}[name]
	if kind == "" {
		kind = "local"
	}
	want := map[string]string{
		Stdio:       `"serve","--transport","stdio","--client","` + kind + `"`,
		UnixSocket:  `"connect","--client","` + kind + `","--workspace",` + quote(o.Workspace),
		TCPLoopback: map[string]string{"claude-code": `"headersHelper":"clawd token header --client cc --workspace ` + o.Workspace + `"`, "opencode": `"Authorization":"Bearer {file:` + o.CredentialFile + `}"`}[name],
	}[tr]
	if !strings.Contains(s, want) {
		t.Fatalf("entry %s lacks %s", s, want)
	}
	if name == "claude-desktop" && tr == Stdio && !strings.Contains(s, `"--workspace",`+quote(o.Workspace)) {
		t.Fatalf("claude-desktop entry does not pin the workspace: %s", s)
	}
}

func TestUninstallKeepsLaterEdits(t *testing.T) {
	a, _ := Lookup("vscode")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	os.MkdirAll(filepath.Dir(e.File), 0o755)
	os.WriteFile(e.File, []byte(existing["vscode"]), 0o644)
	install(t, a, o)
	cur, _ := os.ReadFile(e.File)
	edited := bytes.Replace(cur, []byte("\"inputs\": []"), []byte("\"inputs\": [] // mine"), 1)
	os.WriteFile(e.File, edited, 0o644)
	c, err := PlanUninstall(e.File, e.Path, "")
	if err != nil || c.Restore {
		t.Fatalf("restored the backup over a later edit: %v", err)
	}
	Apply(c)
	got, _ := os.ReadFile(e.File)
	want := strings.Replace(existing["vscode"], "\"inputs\": []", "\"inputs\": [] // mine", 1)
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// The stale backup stays (it is never overwritten) but is not used.
	if _, err := os.Stat(e.File + BackupSuffix); err != nil {
		t.Fatal("backup gone")
	}
}

func TestBackupNeverOverwritten(t *testing.T) {
	a, _ := Lookup("cursor")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	os.MkdirAll(filepath.Dir(e.File), 0o755)
	os.WriteFile(e.File, []byte(existing["cursor"]), 0o644)
	install(t, a, o)
	o.Transport = UnixSocket
	install(t, a, o)
	if b, _ := os.ReadFile(e.File + BackupSuffix); string(b) != existing["cursor"] {
		t.Fatalf("backup overwritten: %s", b)
	}
	// Uninstall after a transport change still restores the original.
	c, _ := PlanUninstall(e.File, e.Path, "")
	Apply(c)
	if b, _ := os.ReadFile(e.File); string(b) != existing["cursor"] {
		t.Fatalf("not restored: %s", b)
	}
}

func TestInstallWritesThroughSymlink(t *testing.T) {
	a, _ := Lookup("claude-code")
	o := testOptions(t, User, Stdio)
	e, _ := a.Entry(o)
	real := filepath.Join(o.Home, "dotfiles-claude.json")
	os.WriteFile(real, []byte(existing["claude-code"]), 0o600)
	if err := os.Symlink(real, e.File); err != nil {
		t.Skip(err)
	}
	install(t, a, o)
	if fi, _ := os.Lstat(e.File); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(real); !bytes.Contains(b, []byte(`"clawd"`)) {
		t.Fatal("target not updated")
	}
}

func TestBrokenConfigIsRefusedUntouched(t *testing.T) {
	a, _ := Lookup("opencode")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	bad := []byte("{\n  \"mcp\": [\"not\", \"an object\"]\n}\n")
	os.WriteFile(e.File, bad, 0o644)
	_, err := PlanInstall(a, o)
	if err == nil || !strings.Contains(err.Error(), e.File) || !strings.Contains(err.Error(), "not an object") {
		t.Fatalf("error does not name the file and the problem: %v", err)
	}
}

func TestHookInstallUninstall(t *testing.T) {
	o := testOptions(t, Project, Stdio)
	script, settings := hookPaths(o)
	orig := []byte("{\n  \"permissions\": {\"allow\": []},\n  \"hooks\": {\n    \"SessionStart\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}\n    ]\n  }\n}\n")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, orig, 0o644)
	apply := func(cs []Change, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if err := Apply(c); err != nil {
				t.Fatal(err)
			}
		}
	}
	apply(PlanHookInstall(o))
	got, _ := os.ReadFile(settings)
	if !bytes.Contains(got, []byte(`"echo hi"`)) || !bytes.Contains(got, []byte(`"command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/`+HookScriptName+`"`)) {
		t.Fatalf("settings:\n%s", got)
	}
	if st, err := os.Stat(script); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("script missing or not executable: %v", err)
	}
	cs, _ := PlanHookInstall(o)
	for _, c := range cs {
		if c.Changed() {
			t.Fatalf("second hook install changes %s", c.File)
		}
	}
	apply(PlanHookUninstall(o))
	if b, _ := os.ReadFile(settings); !bytes.Equal(b, orig) {
		t.Fatalf("settings not restored:\n%s", b)
	}
	if _, err := os.Stat(script); err == nil {
		t.Fatal("script left behind")
	}
}

func TestApprovalAddedAndRemoved(t *testing.T) {
	o := testOptions(t, Project, Stdio)
	f := approvalFile(o)
	orig := []byte("{\n  \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n  \"enabledMcpjsonServers\": [\"other\"]\n}\n")
	os.MkdirAll(filepath.Dir(f), 0o755)
	os.WriteFile(f, orig, 0o644)
	c, err := PlanApprove(o)
	if err != nil {
		t.Fatal(err)
	}
	Apply(c)
	got, _ := os.ReadFile(f)
	var v struct{ EnabledMcpjsonServers []string }
	if err := json.Unmarshal(got, &v); err != nil || strings.Join(v.EnabledMcpjsonServers, ",") != "other,clawd" {
		t.Fatalf("approval not added: %v\n%s", err, got)
	}
	if c, _ := PlanApprove(o); c.Changed() {
		t.Fatal("second approve changes the file")
	}
	c, _ = PlanUnapprove(o)
	Apply(c)
	if b, _ := os.ReadFile(f); !bytes.Equal(b, orig) {
		t.Fatalf("not restored:\n%s", b)
	}
}

// A file install created, then changed to another transport, goes away on
// uninstall; the intermediate state must not become the "original".
func TestReinstallDoesNotBackUpClawdsOwnEntry(t *testing.T) {
	a, _ := Lookup("claude-code")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	install(t, a, o)
	o.Transport = TCPLoopback
	install(t, a, o)
	if _, err := os.Stat(e.File + BackupSuffix); err == nil {
		t.Fatal("backed up a file that held only clawd's entry")
	}
	c, _ := PlanUninstall(e.File, e.Path, "")
	Apply(c)
	if b, err := os.ReadFile(e.File); err == nil {
		t.Fatalf("file still there:\n%s", b)
	}
}

func TestProjectSymlinkOutsideRefused(t *testing.T) {
	a, _ := Lookup("cursor")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	victim := filepath.Join(o.Home, "victim.json")
	os.WriteFile(victim, []byte(`{"mcpServers":{}}`), 0o644)
	// A checked-out repository links its .cursor directory out of the project.
	if err := os.Symlink(o.Home, filepath.Join(o.Workspace, ".cursor")); err != nil {
		t.Skip(err)
	}
	os.Rename(victim, filepath.Join(o.Home, "mcp.json"))
	_, err := PlanInstall(a, o)
	if err == nil || !strings.Contains(err.Error(), "outside the project") {
		t.Fatalf("install through a link out of the project: %v", err)
	}
	if _, err := PlanUninstall(e.File, e.Path, o.Workspace); err == nil {
		t.Fatal("uninstall through a link out of the project accepted")
	}
	// In the user's own files a symlink is the user's choice and is followed.
	o.Scope = User
	if _, err := PlanInstall(a, o); err != nil {
		t.Fatal(err)
	}
}

func TestCheck(t *testing.T) {
	a, _ := Lookup("opencode")
	o := testOptions(t, Project, UnixSocket)
	if st, err := Check(a, o); err != nil || st.Installed {
		t.Fatalf("before install: %+v %v", st, err)
	}
	install(t, a, o)
	if st, err := Check(a, o); err != nil || !st.Installed || !st.Current {
		t.Fatalf("after install: %+v %v", st, err)
	}
	any := o
	any.Transport = ""
	if st, _ := Check(a, any); !st.Current {
		t.Fatal("any-transport check: not current")
	}
	stale := o
	stale.Command = "/old/path/clawd"
	if st, _ := Check(a, stale); !st.Installed || st.Current {
		t.Fatalf("entry with another binary reported current: %+v", st)
	}
}
