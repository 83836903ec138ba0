//go:build unix

package config

import (
	"fmt"
	"os"
	"syscall"

	"github.com/clawde/clawd/internal/support/safetext"
)

// checkOwnDir refuses dir unless it is a real directory (not a symlink)
// owned by this user with no access for group or others. With fix, a
// wider mode on our own directory is narrowed to 0700 instead.
func checkOwnDir(dir string, fix bool) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("runtime directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("runtime directory %s is not a directory (a symlink or file someone put there); remove it, or set XDG_RUNTIME_DIR", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("runtime directory %s: cannot read its owner", dir)
	}
	if uid := os.Getuid(); int(st.Uid) != uid {
		return fmt.Errorf("runtime directory %s belongs to uid %d, not to you (uid %d): another user may want your clients' traffic; remove it, or set XDG_RUNTIME_DIR", dir, st.Uid, uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if !fix {
			return fmt.Errorf("runtime directory %s has mode %v; run `chmod 700 %[1]s`", safetext.ShellWord(dir), fi.Mode().Perm())
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("runtime directory %s: %w", dir, err)
		}
	}
	return nil
}
