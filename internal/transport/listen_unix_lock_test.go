//go:build linux || darwin

package transport

import (
	"os"
	"path/filepath"
	"testing"
)

// TestListenUnixRefusalLeavesNoLockFile: a socket path where something
// else is (`--socket /etc/passwd`) is refused without creating
// "<path>.lock" next to it: run as root, an /etc/passwd.lock left behind
// makes useradd and passwd fail until someone removes it.
func TestListenUnixRefusalLeavesNoLockFile(t *testing.T) {
	for name, setup := range map[string]func(string){
		"regular file": func(p string) { os.WriteFile(p, []byte("keep me"), 0o600) },
		"directory":    func(p string) { os.Mkdir(p, 0o700) },
		"symlink":      func(p string) { os.Symlink("/etc/passwd", p) },
	} {
		path := filepath.Join(shortDir(t), "victim")
		setup(path)
		if ln, err := ListenUnix(path); err == nil {
			ln.Close()
			t.Fatalf("%s: ListenUnix succeeded", name)
		}
		if _, err := os.Lstat(path + ".lock"); err == nil {
			t.Errorf("%s: refused, but left %s.lock", name, path)
		}
	}
}
