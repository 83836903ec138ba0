package store

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// Open waits for another connection that holds a new database (still in
// rollback mode) while it creates it, as a second clawd process starting
// at the same moment does, instead of failing at once with SQLITE_BUSY:
// switching to WAL mode does not wait by itself.
func TestOpenWaitsForAnotherCreator(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	if _, err := other.Exec(`CREATE TABLE creating (a)`); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(`BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	const held = 300 * time.Millisecond
	go func() {
		time.Sleep(held)
		other.Exec(`COMMIT`)
	}()
	start := time.Now()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open while another connection creates the database: %v", err)
	}
	db.Close()
	if took := time.Since(start); took < held/2 {
		t.Errorf("Open returned after %v, before the other connection let go (%v): the test proves nothing", took, held)
	}
}
