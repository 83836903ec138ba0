package fileutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Private files and directories: clawd's token, key, database and state
// must be readable by their user only. On unix the modes given at creation
// (0600 files, 0700 directories) do it and MakePrivate does nothing more.
// On Windows modes mean nothing beyond read-only, so MakePrivate replaces
// the object's access list with one that grants the current user full
// control and nobody else anything, protected from inheriting its parent's
// entries (docs/platforms.md).

// MkdirPrivate creates dir and any missing parents (0700), and makes each
// directory it created private. A directory that already existed is left as
// it was: clawd does not change the access of a folder it did not create
// (a home directory named as the data directory, say).
func MkdirPrivate(dir string) error {
	missing := missingDirs(dir, func(p string) bool {
		_, err := os.Lstat(p)
		return !errors.Is(err, fs.ErrNotExist)
	})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, d := range missing {
		if err := MakePrivate(d, true); err != nil {
			return err
		}
	}
	return nil
}

// missingDirs lists, outermost first, the directories that MkdirAll(dir)
// would create: dir and those of its parents for which exists is false,
// stopping at the first that exists.
func missingDirs(dir string, exists func(string) bool) []string {
	var out []string
	for p := filepath.Clean(dir); !exists(p); {
		out = append(out, p)
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// privateSDDL is the security descriptor MakePrivate sets on Windows, in
// SDDL: a protected DACL (P: nothing inherited from the parent) with one
// entry allowing full access (FA) to the user's SID. A directory's entry is
// inherited by the files (OI) and directories (CI) created inside it, so a
// database's -wal and -shm files are private too.
func privateSDDL(userSID string, dir bool) string {
	inherit := ""
	if dir {
		inherit = "OICI"
	}
	return "D:P(A;" + inherit + ";FA;;;" + userSID + ")"
}
