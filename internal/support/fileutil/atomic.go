// Package fileutil holds small file helpers for clawd's own files (config,
// token, secret): never for workspace files, which go through os.Root.
package fileutil

import (
	"os"
	"path/filepath"
)

// WriteAtomic writes data to path so that readers see the old content or
// the new, never a part: a temp file in the same directory, synced, chmod'ed
// to perm (and, for a mode without group or other bits, private on Windows
// too: MakePrivate), then renamed over path, and the directory synced.
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, data, perm, true, nil)
}

// WriteAtomicLike is WriteAtomic for a file that is someone's own (a
// client's config): the new file also gets like's owner and group where
// this process may give them, so root editing a user's file leaves it the
// user's. like nil is WriteAtomic.
func WriteAtomicLike(path string, data []byte, perm os.FileMode, like os.FileInfo) error {
	return writeAtomic(path, data, perm, true, like)
}

// WriteAtomicVolatile is WriteAtomic without the sync: readers still see
// the old content or the new, but after a power loss or a kernel crash the
// file may be empty or old. For records that mean nothing after a reboot
// (clawd's list of the upstream processes it runs), where the sync costs
// milliseconds on every write for nothing.
func WriteAtomicVolatile(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, data, perm, false, nil)
}

func writeAtomic(path string, data []byte, perm os.FileMode, sync bool, like os.FileInfo) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if like != nil {
		chownLike(f, like)
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if perm&0o077 == 0 {
		if err = MakePrivate(tmp, false); err != nil {
			return err
		}
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if sync {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if sync {
		syncDir(filepath.Dir(path))
	}
	return nil
}

// syncDir makes a rename in dir durable: until the directory is synced, a
// crash may bring back the old file after WriteAtomic returned. Best
// effort: some systems (Windows) cannot open a directory for it, and the
// new content is complete either way. A variable so a test can see it.
var syncDir = func(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
