package fileutil

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The directories MkdirPrivate makes private are exactly those it creates,
// outermost first: never one that existed (a home directory).
func TestMissingDirs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dir    string
		exists []string
		want   []string
	}{
		{"all exist", "/home/ann/.local/share/clawd", []string{"/", "/home", "/home/ann", "/home/ann/.local", "/home/ann/.local/share", "/home/ann/.local/share/clawd"}, nil},
		{"leaf missing", "/home/ann/.local/share/clawd", []string{"/", "/home", "/home/ann", "/home/ann/.local", "/home/ann/.local/share"}, []string{"/home/ann/.local/share/clawd"}},
		{"two missing", "/home/ann/.local/share/clawd", []string{"/", "/home", "/home/ann", "/home/ann/.local"}, []string{"/home/ann/.local/share", "/home/ann/.local/share/clawd"}},
		{"unclean path", "/home/ann//x/./y/", []string{"/", "/home", "/home/ann"}, []string{"/home/ann/x", "/home/ann/x/y"}},
		{"relative", "a/b", []string{"."}, []string{"a", "a/b"}},
		{"nothing exists, not even the root", "/a", nil, []string{"/", "/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := missingDirs(tc.dir, func(p string) bool { return slices.Contains(tc.exists, p) })
			if !slices.Equal(got, tc.want) {
				t.Fatalf("missingDirs(%q) = %q, want %q", tc.dir, got, tc.want)
			}
		})
	}
}

// The Windows access list: one allow entry for the user, protected from the
// parent's, inherited by what a directory holds and only then.
func TestPrivateSDDL(t *testing.T) {
	const sid = "S-1-5-21-1-2-3-1001"
	for _, tc := range []struct {
		dir  bool
		want string
	}{
		{false, "D:P(A;;FA;;;S-1-5-21-1-2-3-1001)"},
		{true, "D:P(A;OICI;FA;;;S-1-5-21-1-2-3-1001)"},
	} {
		if got := privateSDDL(sid, tc.dir); got != tc.want {
			t.Errorf("privateSDDL(dir=%v) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}

// MkdirPrivate creates the whole chain and WriteAtomic leaves a 0600 file.
func TestMkdirPrivateAndWriteAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := MkdirPrivate(dir); err != nil {
		t.Fatal(err)
	}
	if err := MkdirPrivate(dir); err != nil {
		t.Fatalf("again: %v", err)
	}
	p := filepath.Join(dir, "token")
	if err := WriteAtomic(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}
