//go:build unix

package hostadapter

import (
	"bytes"
	"os"
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
