package hostadapter

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDanglingSymlinkWrittenThrough: a user file that is a symlink to a
// file not created yet (a dotfiles checkout) stays a link: install creates
// the file it names, uninstall removes that file and leaves the link.
func TestDanglingSymlinkWrittenThrough(t *testing.T) {
	a, _ := Lookup("claude-code")
	o := testOptions(t, User, Stdio)
	e, _ := a.Entry(o)
	real := filepath.Join(o.Home, "dotfiles", "claude.json")
	if err := os.Symlink("dotfiles/claude.json", e.File); err != nil {
		t.Skip(err)
	}
	install(t, a, o)
	if fi, err := os.Lstat(e.File); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v", err)
	}
	if b, _ := os.ReadFile(real); !bytes.Contains(b, []byte(`"clawd"`)) {
		t.Fatalf("the link's target was not written: %q", b)
	}
	c, err := PlanUninstall(e.File, e.Path, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(c); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(e.File); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("uninstall removed the user's symlink: %v", err)
	}
	if _, err := os.Stat(real); !os.IsNotExist(err) {
		t.Fatalf("the file install created is still there: %v", err)
	}
}

// TestProjectDanglingSymlinkOutsideRefused: a project file that is a
// symlink to a file that does not exist outside the project is refused
// like one whose target exists: install must not create a file elsewhere.
func TestProjectDanglingSymlinkOutsideRefused(t *testing.T) {
	a, _ := Lookup("claude-code")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	outside := filepath.Join(o.Home, "planted.json")
	if err := os.Symlink(outside, e.File); err != nil {
		t.Skip(err)
	}
	_, err := PlanInstall(a, o)
	if err == nil || !strings.Contains(err.Error(), "outside the project") {
		t.Fatalf("install through a dangling link out of the project: %v", err)
	}
	if err := Apply(Change{File: e.File, After: []byte("{}\n"), Root: o.Workspace}); err == nil {
		t.Fatal("Apply wrote through a dangling link out of the project")
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("a file was created outside the project: %v", err)
	}
}

// TestHookUninstallKeepsEditedScript: uninstall deletes the hook script
// only while it is the one clawd wrote (for any clawd command); a script
// the user changed since stays, while its registration still goes.
func TestHookUninstallKeepsEditedScript(t *testing.T) {
	o := testOptions(t, User, Stdio)
	o.Command = "/opt/clawd/bin/clawd"
	script, settings := hookPaths(o)
	cs, err := PlanHookInstall(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if err := Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	edited := append(HookScript(o.Command), "export MY_VAR=1 # mine\n"...)
	os.WriteFile(script, edited, 0o755)
	o.Command = "clawd" // uninstall run by another binary than install
	cs, err = PlanHookUninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if err := Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(script); err != nil || !bytes.Equal(b, edited) {
		t.Fatalf("the edited script was not kept: %v", err)
	}
	if b, _ := os.ReadFile(settings); bytes.Contains(b, []byte(HookScriptName)) {
		t.Fatalf("registration left:\n%s", b)
	}
	// The script as clawd wrote it goes, whichever command it names.
	os.WriteFile(script, HookScript("/opt/clawd/bin/clawd"), 0o755)
	cs, _ = PlanHookUninstall(o)
	for _, c := range cs {
		Apply(c)
	}
	if _, err := os.Stat(script); !os.IsNotExist(err) {
		t.Fatalf("clawd's own script left: %v", err)
	}
}

// TestReadOnlyFileLeftAlone: a config the user made read-only is not
// rewritten (a rename in a writable directory would get past the mode, and
// root ignores it): the error names the file and the fix.
func TestReadOnlyFileLeftAlone(t *testing.T) {
	a, _ := Lookup("cursor")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	os.MkdirAll(filepath.Dir(e.File), 0o755)
	orig := []byte(existing["cursor"])
	os.WriteFile(e.File, orig, 0o444)
	c, err := PlanInstall(a, o)
	if err != nil {
		t.Fatal(err)
	}
	err = Apply(c)
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), "chmod") {
		t.Fatalf("read-only file: %v", err)
	}
	if b, _ := os.ReadFile(e.File); !bytes.Equal(b, orig) {
		t.Fatalf("read-only file changed:\n%s", b)
	}
	if _, err := os.Lstat(e.File + BackupSuffix); err == nil {
		t.Fatal("backup written for a change that was refused")
	}
	if err := c.Check(); err == nil {
		t.Fatal("Check passes a change to a read-only file")
	}
}

// TestOpenCodeUserFileFollowsXDG: OpenCode reads its global config from
// $XDG_CONFIG_HOME/opencode (~/.config/opencode when unset, on every OS),
// so a user entry written under ~/.config while XDG_CONFIG_HOME points
// elsewhere would never be read.
func TestOpenCodeUserFileFollowsXDG(t *testing.T) {
	a, _ := Lookup("opencode")
	o := testOptions(t, User, Stdio)
	o.XDGConfig = filepath.Join(o.Home, "dotfiles", "config")
	e, err := a.Entry(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(o.XDGConfig, "opencode", "opencode.json"); e.File != want {
		t.Fatalf("user file %s, want %s", e.File, want)
	}
	os.MkdirAll(filepath.Join(o.XDGConfig, "opencode"), 0o755)
	os.WriteFile(filepath.Join(o.XDGConfig, "opencode", "opencode.jsonc"), []byte("{}\n"), 0o600)
	if e, _ := a.Entry(o); e.File != filepath.Join(o.XDGConfig, "opencode", "opencode.jsonc") {
		t.Fatalf("existing .jsonc not used: %s", e.File)
	}
	o.XDGConfig = ""
	if e, _ := a.Entry(o); e.File != filepath.Join(o.Home, ".config", "opencode", "opencode.json") {
		t.Fatalf("default user file %s", e.File)
	}
}

// TestXDGConfigHome: $XDG_CONFIG_HOME when it is an absolute path (the XDG
// rule: a relative one is ignored), else ~/.config.
func TestXDGConfigHome(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/x/cfg")
	if got := XDGConfigHome("/h"); got != "/x/cfg" {
		t.Fatal(got)
	}
	for _, v := range []string{"", "rel/cfg"} {
		t.Setenv("XDG_CONFIG_HOME", v)
		if got := XDGConfigHome("/h"); got != filepath.Join("/h", ".config") {
			t.Fatalf("%q: %s", v, got)
		}
	}
}

// TestClaudeCodeUserFilesFollowClaudeConfigDir: with CLAUDE_CONFIG_DIR set,
// Claude Code keeps .claude.json and settings.json (and the user's hooks)
// in that directory and never reads ~/.claude.json, so the user entry and
// the user hook go there.
func TestClaudeCodeUserFilesFollowClaudeConfigDir(t *testing.T) {
	a, _ := Lookup("claude-code")
	o := testOptions(t, User, Stdio)
	o.ClaudeConfigDir = filepath.Join(o.Home, "work-claude")
	e, err := a.Entry(o)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(o.ClaudeConfigDir, ".claude.json"); e.File != want {
		t.Fatalf("user file %s, want %s", e.File, want)
	}
	script, settings := hookPaths(o)
	if filepath.Dir(settings) != o.ClaudeConfigDir || filepath.Dir(filepath.Dir(script)) != o.ClaudeConfigDir {
		t.Fatalf("hook in %s and %s, want under %s", script, settings, o.ClaudeConfigDir)
	}
	o.ClaudeConfigDir = ""
	if e, _ := a.Entry(o); e.File != filepath.Join(o.Home, ".claude.json") {
		t.Fatalf("default user file %s", e.File)
	}
	if _, settings := hookPaths(o); settings != filepath.Join(o.Home, ".claude", "settings.json") {
		t.Fatalf("default settings %s", settings)
	}
	// The project's files do not move.
	o.Scope, o.ClaudeConfigDir = Project, filepath.Join(o.Home, "work-claude")
	if e, _ := a.Entry(o); e.File != filepath.Join(o.Workspace, ".mcp.json") {
		t.Fatalf("project file %s", e.File)
	}
}

// TestUninstallMakesNoBackupOfClawdsEntry: uninstall that cuts the entry
// out of a file with later changes must not save that file (which holds
// clawd's entry) as the backup: a later install and uninstall would then
// "restore" it and leave the entry in place.
func TestUninstallMakesNoBackupOfClawdsEntry(t *testing.T) {
	a, _ := Lookup("claude-code")
	o := testOptions(t, User, Stdio)
	e, _ := a.Entry(o)
	install(t, a, o) // creates the file: no backup
	b, _ := os.ReadFile(e.File)
	b, err := SetMember(b, nil, "numStartups", []byte("3")) // the client writes it
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(e.File, b, 0o600)
	uninstall := func() {
		t.Helper()
		c, err := PlanUninstall(e.File, e.Path, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	uninstall()
	if b, err := os.ReadFile(e.File + BackupSuffix); err == nil {
		t.Errorf("uninstall wrote a backup holding clawd's entry:\n%s", b)
	}
	install(t, a, o)
	uninstall()
	if b, _ := os.ReadFile(e.File); bytes.Contains(b, []byte(`"clawd"`)) {
		t.Fatalf("the entry is still there after uninstall:\n%s", b)
	}
}

// TestHookUninstallMakesNoBackupOfTheHook: the same for the hook's
// settings.json: cutting the hook out of a file with other changes saves
// no backup, so a second install and uninstall take the hook out again.
func TestHookUninstallMakesNoBackupOfTheHook(t *testing.T) {
	o := testOptions(t, User, Stdio)
	_, settings := hookPaths(o)
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
	b, _ := os.ReadFile(settings)
	b, _ = SetMember(b, nil, "model", []byte(`"opus"`))
	os.WriteFile(settings, b, 0o644)
	apply(PlanHookUninstall(o))
	if _, err := os.Stat(settings + BackupSuffix); err == nil {
		t.Error("hook uninstall wrote a backup holding the hook")
	}
	apply(PlanHookInstall(o))
	apply(PlanHookUninstall(o))
	if b, _ := os.ReadFile(settings); bytes.Contains(b, []byte(HookScriptName)) {
		t.Fatalf("the hook is still registered after uninstall:\n%s", b)
	}
}

// TestUninstallIgnoresBackupHoldingTheEntry: a backup that already holds
// the very entry being removed (left by an earlier clawd that saved one at
// uninstall) is not the user's original: uninstall cuts the entry out
// instead of "restoring" it.
func TestUninstallIgnoresBackupHoldingTheEntry(t *testing.T) {
	a, _ := Lookup("claude-code")
	o := testOptions(t, User, Stdio)
	e, _ := a.Entry(o)
	install(t, a, o)
	b, _ := os.ReadFile(e.File)
	os.WriteFile(e.File+BackupSuffix, b, 0o600)
	c, err := PlanUninstall(e.File, e.Path, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(c); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(e.File); err == nil && bytes.Contains(b, []byte(`"clawd"`)) {
		t.Fatalf("the entry is still there after uninstall:\n%s", b)
	}
}

// TestUninstallWithUnusableBackup: something at the backup's path that is
// not a file (a directory a repository brings along) does not keep
// uninstall from cutting the entry out; it is left alone.
func TestUninstallWithUnusableBackup(t *testing.T) {
	a, _ := Lookup("claude-code")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	os.WriteFile(e.File, []byte(`{"mcpServers":{}}`), 0o644)
	os.Mkdir(e.File+BackupSuffix, 0o755)
	install(t, a, o)
	c, err := PlanUninstall(e.File, e.Path, o.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(c); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(e.File); bytes.Contains(b, []byte(`"clawd"`)) || !bytes.Contains(b, []byte(`"mcpServers"`)) {
		t.Fatalf("after uninstall:\n%s", b)
	}
	if st, err := os.Stat(e.File + BackupSuffix); err != nil || !st.IsDir() {
		t.Fatal("the directory at the backup's path was touched")
	}
}

// TestUnapproveAndHookUninstallWithUnusableBackup: the same holds for the
// approval in settings.local.json and the hook in settings.json.
func TestUnapproveAndHookUninstallWithUnusableBackup(t *testing.T) {
	o := testOptions(t, Project, Stdio)
	_, settings := hookPaths(o)
	approval := approvalFile(o)
	os.MkdirAll(filepath.Dir(settings), 0o755)
	for _, f := range []string{settings, approval} {
		os.WriteFile(f, []byte("{\"model\": \"opus\"}\n"), 0o644)
		os.Mkdir(f+BackupSuffix, 0o755)
	}
	var cs []Change
	ac, err := PlanApprove(o)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := PlanHookInstall(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(append(cs, ac), hc...) {
		if err := Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	uc, err := PlanUnapprove(o)
	if err != nil {
		t.Fatalf("unapprove: %v", err)
	}
	huc, err := PlanHookUninstall(o)
	if err != nil {
		t.Fatalf("hook uninstall: %v", err)
	}
	for _, c := range append([]Change{uc}, huc...) {
		if err := Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(approval); bytes.Contains(b, []byte(`"clawd"`)) {
		t.Fatalf("approval left:\n%s", b)
	}
	if b, _ := os.ReadFile(settings); bytes.Contains(b, []byte(HookScriptName)) {
		t.Fatalf("hook left:\n%s", b)
	}
}

// TestReadOnlyFixIsOneShellWord: the chmod a refusal suggests names the
// file as one shell word, so a project under "My Projects" or a directory
// with $(...) in its name (an unpacked archive picks it) is not split or
// run when the user pastes the command.
func TestReadOnlyFixIsOneShellWord(t *testing.T) {
	a, _ := Lookup("cursor")
	o := testOptions(t, Project, Stdio)
	o.Workspace = filepath.Join(o.Workspace, "My $(touch pwned) proj")
	os.MkdirAll(o.Workspace, 0o755)
	e, _ := a.Entry(o)
	os.MkdirAll(filepath.Dir(e.File), 0o755)
	os.WriteFile(e.File, []byte(existing["cursor"]), 0o444)
	c, err := PlanInstall(a, o)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Check()
	if err == nil || !strings.Contains(err.Error(), "chmod u+w '"+e.File+"')") {
		t.Fatalf("read-only fix does not quote the path: %v", err)
	}
}

// TestRefusalsKeepTheFileOnOneLine: install's refusals name the file as
// one shell word, so a workspace directory with a newline in its name (an
// archive picks it) cannot split a refusal into lines that read as
// clawd's own.
func TestRefusalsKeepTheFileOnOneLine(t *testing.T) {
	a, _ := Lookup("cursor")
	o := testOptions(t, Project, Stdio)
	o.Workspace = filepath.Join(o.Workspace, "p\nclawd: all good")
	os.MkdirAll(filepath.Join(o.Workspace, ".cursor"), 0o755)
	e, _ := a.Entry(o)
	// Not JSON: the parse refusal.
	os.WriteFile(e.File, []byte("{nope"), 0o644)
	_, err := PlanInstall(a, o)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("unparsable file: %q", err)
	}
	// A link out of the project: the confinement refusal.
	os.Remove(e.File)
	os.Symlink(filepath.Join(o.Home, "elsewhere.json"), e.File)
	_, err = PlanInstall(a, o)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("link out of the project: %q", err)
	}
	// A directory: the read refusal.
	os.Remove(e.File)
	os.Mkdir(e.File, 0o755)
	_, err = PlanInstall(a, o)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("directory: %q", err)
	}
}
