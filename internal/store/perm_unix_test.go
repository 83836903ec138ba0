//go:build unix

package store

import (
	"os"
	"path/filepath"
	"testing"
)

// A database left with a mode others can read (restored from a backup,
// copied, made by an older clawd) is narrowed to 0600 when clawd opens it,
// and so are its -wal and -shm files, which SQLite creates with the
// database's mode: otherwise the audit log, the trust registry and literal
// upstream secrets would be readable by anyone who can enter the
// directory (one that existed before clawd keeps its mode).
func TestOpenNarrowsALooseDatabase(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "clawd.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o644); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	if err := os.WriteFile(path+"-shm", nil, 0o666); err != nil { // an existing loose -shm
		t.Fatal(err)
	}
	os.Chmod(path+"-shm", 0o666)
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.wdb.Exec(`CREATE TABLE t (a)`); err != nil { // makes the -wal
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
}
