//go:build unix

package token

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkPrivate refuses a key file that others can read (they could forge
// tokens) or that another user owns (they could replace the key).
func checkPrivate(_ string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("mode %04o lets other users read it, and with it forge tokens; remove the file and restart clawd to generate a new key", perm)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("owned by uid %d, not by this user (uid %d); remove it and clawd will create a new one", st.Uid, os.Geteuid())
	}
	return nil
}
