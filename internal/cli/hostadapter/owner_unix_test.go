//go:build unix

package hostadapter

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestInstallKeepsOwner: a config replaced by root (`sudo clawd install
// claude-code --user` with the user's HOME) keeps its owner and group, so
// the client, running as the user, can still read its 0600 file; the
// backup gets them too.
func TestInstallKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	a, _ := Lookup("claude-code")
	o := testOptions(t, User, Stdio)
	e, _ := a.Entry(o)
	os.WriteFile(e.File, []byte(existing["claude-code"]), 0o600)
	const uid, gid = 65534, 65534
	if err := os.Chown(e.File, uid, gid); err != nil {
		t.Skip(err)
	}
	install(t, a, o)
	for _, p := range []string{e.File, e.File + BackupSuffix} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if s := st.Sys().(*syscall.Stat_t); s.Uid != uid || s.Gid != gid || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: owner %d:%d mode %v, want %d:%d 0600", p, s.Uid, s.Gid, st.Mode().Perm(), uid, gid)
		}
	}
	if b, _ := os.ReadFile(e.File); !bytes.Contains(b, []byte(`"clawd"`)) {
		t.Fatal("not installed")
	}
}

// TestUserDirsCreatedPrivate: directories install creates for a user file
// are 0700: ~/.claude/hooks, which install --hook may create first, is
// also where clawd keeps the workspace token and credential files.
func TestUserDirsCreatedPrivate(t *testing.T) {
	o := testOptions(t, User, Stdio)
	cs, err := PlanHookInstall(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if err := Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Join(o.Home, ".claude"), filepath.Join(o.Home, ".claude", "hooks")} {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want 0700", d, st.Mode().Perm(), err)
		}
	}
	// A project's directories are shared like its files.
	o.Scope = Project
	if cs, err = PlanHookInstall(o); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		Apply(c)
	}
	if st, err := os.Stat(filepath.Join(o.Workspace, ".claude", "hooks")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("project hooks dir: %v %v, want 0755", st.Mode().Perm(), err)
	}
}
