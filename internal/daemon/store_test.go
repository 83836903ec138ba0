package daemon

import (
	"database/sql"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/store"
)

// A database a newer clawd wrote is refused with a message that says so
// and what to do, not with the permissions hint of an unwritable data
// directory, and it is left as it was.
func TestOpenStoreRefusesNewerSchemaClearly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	r, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Exec(`INSERT INTO cd_schema_migrations VALUES (?, 'later')`, store.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}

	d := &Daemon{Paths: config.Paths{DBFile: path}, Logger: slog.New(slog.DiscardHandler)}
	d.setConfig(config.Default())
	err = d.openStore()
	if err == nil {
		d.closeStore()
		t.Fatal("openStore opened a database of a newer schema")
	}
	msg := err.Error()
	if !strings.Contains(msg, "newer") || !strings.Contains(msg, path) || strings.Contains(msg, "permissions") || strings.Contains(msg, "XDG_DATA_HOME") {
		t.Errorf("openStore = %q, want the newer-schema refusal naming the file, without the data directory's hints", msg)
	}
	var n int
	if err := r.QueryRow(`SELECT count(*) FROM cd_schema_migrations`).Scan(&n); err != nil || n != store.SchemaVersion+1 {
		t.Errorf("versions after the refusal: %d, %v", n, err)
	}
}
