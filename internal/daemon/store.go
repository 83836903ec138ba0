package daemon

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/clawde/clawd/internal/store"
)

// openStore opens the database in the data directory and connects the
// chain to it: the trust registry, the supply-chain allowlist and the
// audit writer. Without a writable audit log clawd does not start: every
// call must be on record.
func (d *Daemon) openStore() error {
	db, err := store.Open(d.Paths.DBFile, store.Options{Logger: d.Logger, SyncFull: d.Config().AuditSync == "full"})
	if err != nil {
		return fmt.Errorf("audit database: %w (clawd keeps its trust registry and audit log there; check the directory's permissions or set XDG_DATA_HOME)", err)
	}
	w, err := db.Audit()
	if err != nil {
		db.Close()
		return fmt.Errorf("audit database %s: %w", d.Paths.DBFile, err)
	}
	d.Store = db
	d.Chain.Trust = db
	d.Chain.Allow = db
	d.Chain.Credentials = db
	d.Chain.Audit = w
	d.Chain.Logger = d.Logger
	if inside(d.WS.Dir, d.Paths.DataDir) {
		d.Logger.Warn("clawd's data directory is inside the workspace, so workspace tools can reach the audit database; "+
			"serve a narrower workspace or set XDG_DATA_HOME elsewhere", "data_dir", d.Paths.DataDir, "workspace", d.WS.Dir)
	}
	return nil
}

// inside reports whether p is dir or below it, resolving symlinks where
// the path exists.
func inside(dir, p string) bool {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (d *Daemon) closeStore() error {
	if d.Store == nil {
		return nil
	}
	return d.Store.Close()
}
