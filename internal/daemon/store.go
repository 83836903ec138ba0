package daemon

import (
	"errors"
	"fmt"

	"github.com/clawde/clawd/internal/store"
)

// openStore opens the database in the data directory and connects the
// chain to it: the trust registry, the supply-chain allowlist and the
// audit writer. Without a writable audit log clawd does not start: every
// call must be on record.
func (d *Daemon) openStore() error {
	db, err := store.Open(d.Paths.DBFile, store.Options{Logger: d.Logger, SyncFull: d.Config().AuditSync == "full"})
	if errors.Is(err, store.ErrNewerSchema) {
		return fmt.Errorf("audit database: %w", err) // the hint below is for a directory clawd cannot use
	}
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
	d.Chain.Egress = db
	d.Chain.Credentials = db
	d.Chain.Audit = w
	d.Chain.Logger = d.Logger
	return nil
}

func (d *Daemon) closeStore() error {
	if d.Store == nil {
		return nil
	}
	return d.Store.Close()
}
