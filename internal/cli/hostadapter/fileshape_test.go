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
