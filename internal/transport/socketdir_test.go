//go:build linux || darwin

package transport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A socket in a directory other users can change could be unlinked and
// replaced by theirs (and its chmod, by path, pointed elsewhere through a
// symlink swapped in): ListenUnix refuses a directory everyone may write
// to without the sticky bit, and one that belongs to another user, also
// when the socket path reaches it through a symlink. A sticky directory
// (/tmp) and the user's own are fine.
func TestListenUnixRefusesADirectoryOthersControl(t *testing.T) {
	base := shortDir(t)
	open := filepath.Join(base, "open")
	sticky := filepath.Join(base, "sticky")
	for d, mode := range map[string]os.FileMode{open: 0o777, sticky: 0o777 | os.ModeSticky} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	if ln, err := ListenUnix(filepath.Join(open, "s.sock")); err == nil || !strings.Contains(err.Error(), "other users can write") {
		t.Errorf("ListenUnix in a 0777 directory: %v, want a refusal", err)
		if err == nil {
			ln.Close()
		}
	}
	if _, err := os.Lstat(filepath.Join(open, "s.sock.lock")); err == nil {
		t.Errorf("the refusal left a lock file behind")
	}
	ln, err := ListenUnix(filepath.Join(sticky, "s.sock"))
	if err != nil {
		t.Errorf("ListenUnix in a sticky 1777 directory: %v", err)
	} else {
		ln.Close()
	}

	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	theirs := filepath.Join(base, "theirs")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(sticky, "planted")
	if err := os.Symlink(theirs, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(theirs, "s.sock"), filepath.Join(link, "s.sock")} {
		if ln, err := ListenUnix(p); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("ListenUnix(%s), a directory of another user: %v, want a refusal", p, err)
			if err == nil {
				ln.Close()
			}
		}
	}
}

// A directory of this user's inside one another user owns is theirs to
// rename away and replace: every directory above the socket counts, after
// symlinks are resolved once, and the socket, its lock and its chmod all
// go to that resolved directory, so a symlink repointed meanwhile cannot
// move them.
func TestListenUnixChecksEveryDirectoryAbove(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	base := shortDir(t)
	theirs := filepath.Join(base, "t")
	ours := filepath.Join(theirs, "o")
	if err := os.MkdirAll(ours, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(theirs, 0o755)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if ln, err := ListenUnix(filepath.Join(ours, "s.sock")); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("ListenUnix in our directory inside another user's: %v, want a refusal", err)
		if err == nil {
			ln.Close()
		}
	}

	mine := filepath.Join(base, "m")
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "l")
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	ln, err := ListenUnix(filepath.Join(link, "s.sock"))
	if err != nil {
		t.Fatalf("ListenUnix through a symlink to our own directory: %v", err)
	}
	defer ln.Close()
	if want := filepath.Join(mine, "s.sock"); ln.Path() != want {
		t.Errorf("Path() = %s, want the resolved %s", ln.Path(), want)
	}
	if _, err := os.Lstat(filepath.Join(mine, "s.sock.lock")); err != nil {
		t.Errorf("no lock file in the resolved directory: %v", err)
	}
}
