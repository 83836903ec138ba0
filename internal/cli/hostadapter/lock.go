package hostadapter

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// LockName is the lock file install and uninstall hold, in clawd's own
// data directory.
const LockName = "install.lock"

// lockWait bounds how long Lock waits for another holder. An install
// holds the lock for as long as it takes to read and write a few small
// files.
const lockWait = 30 * time.Second

// Lock takes the per-user lock that install and uninstall hold from
// reading a client's config files until they are written: two at once
// (another terminal, a script installing for several workspaces) would
// otherwise read the same bytes, and the second write would drop the
// first one's edit, or its backup. One lock for every file keeps a
// command's several files (entry, approval, hook) together and cannot
// deadlock. The lock file is dir/LockName, dir being clawd's own data
// directory (created 0700 if missing), never next to a user's file, where
// it would be left behind. It waits up to 30 s for another holder; the
// operating system releases a killed holder's lock.
func Lock(dir string) (unlock func(), err error) {
	return lock(dir, lockWait)
}

func lock(dir string, wait time.Duration) (func(), error) {
	if err := fileutil.MkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("creating %s for the install lock: %v", dir, err)
	}
	p := filepath.Join(dir, LockName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the install lock: %v", err)
	}
	deadline := time.Now().Add(wait)
	for {
		ok, err := fileutil.TryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %v", p, err)
		}
		if ok {
			return func() { fileutil.Unlock(f); f.Close() }, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("another clawd install or uninstall has held %s for %v; run again once it is done", p, wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
