// Package store is clawd's SQLite database: the trust registry, the
// supply-chain and egress allowlists, the policy audit log, the upstream
// MCP servers and their tools cache, with their schema migrations.
//
// One file (config.Paths.DBFile, in the data directory, outside every
// workspace) is shared by every clawd process of the user: daemons write
// audit rows, the CLI edits the registry. SQLite's WAL mode lets readers run
// beside the one writer; a busy timeout makes two processes' writers take
// turns instead of failing.
//
// Durability: synchronous=NORMAL in WAL mode makes a committed transaction
// survive a crash of the process (kill -9): its WAL frames were written to
// the OS before COMMIT returned. Audit decisions are made durable the same
// way without a transaction, by a write to the decision journal that is
// folded into the table later (journal.go). A power loss or kernel crash
// can lose the last commits and journal lines; Options.SyncFull (config
// audit_sync = "full") fsyncs every commit and journal line to survive that
// too, at a cost per call.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/support/fileutil"
)

// BusyTimeout is how long a connection waits for another process's write
// lock before giving up with SQLITE_BUSY.
const BusyTimeout = 5 * time.Second

// Options tune Open.
type Options struct {
	// SyncFull fsyncs every commit (PRAGMA synchronous=FULL) and every
	// decision's journal line.
	SyncFull bool
	// Logger receives the audit writer's and checkpointer's errors.
	Logger *slog.Logger
	// CheckpointEvery is how often a daemon folds the WAL back into the
	// database file, off the commit path (default 250 ms).
	CheckpointEvery time.Duration
}

// DB is an open clawd database.
type DB struct {
	path   string
	opts   Options
	rdb    *sql.DB // reads; connections are query_only
	wdb    *sql.DB // writes: migrations, CLI edits, checkpoints
	genSQL *sql.Stmt
	// mcpGenSQL reads MCPServersGeneration.
	mcpGenSQL *sql.Stmt

	snapMu sync.Mutex // serializes snapshot reloads
	snap   atomic.Pointer[snapshot]

	// seen is the newest generation read and when the read began; see
	// freshGeneration.
	opened time.Time
	seen   atomic.Pointer[genStamp]
	wal    *walIndex // nil: the generation is always read from the database
	// genReads counts Generation's reads (tests: which path a call took).
	genReads atomic.Int64

	writerMu sync.Mutex
	writer   *Writer
	closed   bool
}

// Open opens (creating if needed) the database at path, applies pending
// migrations and, on the first start, seeds the trust registry.
func Open(path string, opts Options) (*DB, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = 250 * time.Millisecond
	}
	if err := fileutil.MkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("database directory: %w", err)
	}
	// Create the file 0600 before SQLite does (it would use 0644 and copy
	// that mode to the -wal and -shm files). One that exists with a mode
	// others can use (a restored backup, a copy) is narrowed, and so are
	// its -wal and -shm files: the directory may let others in when it
	// existed before clawd (MkdirPrivate leaves it as it was).
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	err = narrowFile(f)
	f.Close()
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if err == nil {
			err = narrowPath(side)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	if err := fileutil.MakePrivate(path, false); err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	db := &DB{path: path, opts: opts, opened: time.Now()}
	if db.wdb, err = sql.Open("sqlite", dsn(path, opts, false)); err != nil {
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	// Registry edits and migrations, and the checkpointer; the audit
	// writer opens its own connection outside the pool (auditConn).
	db.wdb.SetMaxOpenConns(2)
	db.wdb.SetConnMaxIdleTime(0)
	if err := migrateWaiting(context.Background(), db.wdb); err != nil {
		db.wdb.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	if db.rdb, err = sql.Open("sqlite", dsn(path, opts, true)); err != nil {
		db.wdb.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	db.rdb.SetMaxOpenConns(4)
	db.rdb.SetMaxIdleConns(4)
	if db.genSQL, err = db.rdb.Prepare(`SELECT n FROM cd_generation WHERE id = 1`); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	if db.mcpGenSQL, err = db.rdb.Prepare(`SELECT n FROM cd_mcp_server_generation WHERE id = 1`); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	db.wal = openWALIndex(path) // after the first connection: the index exists
	return db, nil
}

// dsn builds the connection string. The path goes in a file: URI so that
// any character in it (?, #, %) is escaped rather than parsed.
func dsn(path string, opts Options, readOnly bool) string {
	sync := "NORMAL"
	if opts.SyncFull {
		sync = "FULL"
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+sync+")")
	q.Add("_pragma", "foreign_keys(1)")
	// Keep a WAL that grew under load from staying large on disk.
	q.Add("_pragma", "journal_size_limit(67108864)")
	if readOnly {
		q.Add("_query_only", "1")
	} else {
		q.Add("_txlock", "immediate")
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

// migrateWaiting runs migrate, and again while it fails with SQLITE_BUSY,
// for up to BusyTimeout. A connection's first statement switches it to WAL
// mode, which needs the database to itself and, unlike a transaction, does
// not wait for it: on a new database (still in rollback mode), another
// process creating it at the same moment (two clients each spawning `clawd
// serve` on first use) made the open fail at once.
func migrateWaiting(ctx context.Context, wdb *sql.DB) error {
	deadline := time.Now().Add(BusyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := migrate(ctx, wdb)
		if err == nil || !isBusy(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		time.Sleep(wait)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (5, or one of its
// extended codes).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 5
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Close stops the audit writer (committing what it holds) and closes the
// database.
func (db *DB) Close() error {
	db.writerMu.Lock()
	w := db.writer
	db.closed = true
	db.writerMu.Unlock()
	var errs []error
	if w != nil {
		errs = append(errs, w.close())
	}
	if db.genSQL != nil {
		errs = append(errs, db.genSQL.Close())
	}
	if db.mcpGenSQL != nil {
		errs = append(errs, db.mcpGenSQL.Close())
	}
	if db.rdb != nil {
		errs = append(errs, db.rdb.Close())
	}
	errs = append(errs, db.wdb.Close())
	// Last: closing it earlier would drop SQLite's locks on the index.
	errs = append(errs, db.wal.close())
	return errors.Join(errs...)
}

// Generation is a counter that triggers raise on every change to the trust
// registry and the allowlists, by any process. Comparing it is how a daemon
// notices `clawd trust set` without re-reading the tables on every call.
func (db *DB) Generation() (int64, error) {
	db.genReads.Add(1)
	var n int64
	err := db.genSQL.QueryRow().Scan(&n)
	return n, err
}

// FreshFor is how long a generation read stays good for deciding calls. A
// registry change is used by every call decided at least FreshFor after
// the change committed (calls in that window may still see the previous
// state). The audit writer reads the generation after every fold, which
// comes every foldDelay while decisions come; twice that keeps a busy
// daemon from querying it on the call path. An idle one looks at the WAL
// index header (walindex.go) and queries only when something was
// committed since the last read.
const FreshFor = 2 * foldDelay

// genStamp is a generation and the monotonic time (since Open) at which
// the read that returned it began: every commit finished before that time
// is counted in gen. With hdrOK, hdr is the WAL index header read before
// the generation was: every commit it reflects is counted in gen.
type genStamp struct {
	gen   int64
	at    time.Duration
	hdr   walHeader
	hdrOK bool
}

// observe records a generation read that began at t (with the header read
// before it, if hdrOK), unless a newer read is already recorded.
func (db *DB) observe(gen int64, t time.Duration, hdr walHeader, hdrOK bool) {
	st := &genStamp{gen: gen, at: t, hdr: hdr, hdrOK: hdrOK}
	for {
		old := db.seen.Load()
		if old != nil && old.at >= t {
			return
		}
		if db.seen.CompareAndSwap(old, st) {
			return
		}
	}
}

// freshGeneration returns a generation read no longer than FreshFor ago,
// or an older one when the WAL index header shows that nothing was
// committed since it was read, reading it now otherwise.
func (db *DB) freshGeneration() (int64, error) {
	now := time.Since(db.opened)
	st := db.seen.Load()
	if st != nil && now-st.at < FreshFor {
		return st.gen, nil
	}
	// Looked at after now: a commit finished before now has changed it.
	h, hok := db.wal.look()
	if st != nil && st.hdrOK && hok && h == st.hdr {
		db.observe(st.gen, now, h, true)
		return st.gen, nil
	}
	n, err := db.Generation()
	if err != nil {
		return 0, err
	}
	db.observe(n, now, h, hok)
	return n, nil
}

// writeTx runs fn in one write transaction (BEGIN IMMEDIATE, from the DSN's
// _txlock), committing if fn returns nil.
func (db *DB) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// now is the audit and registry time format: UTC, milliseconds, "Z" (the
// spec's "2026-06-01T10:00:00.123Z").
func now() string { return formatTime(time.Now()) }

// Ensure the interfaces the chain needs are implemented.
var (
	_ chain.TrustStore = (*DB)(nil)
	_ chain.Allowlist  = (*DB)(nil)
)

// narrowFile takes group and other permission bits off an open file.
func narrowFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		if err := f.Chmod(perm &^ 0o077); err != nil {
			return fmt.Errorf("mode %04o lets other users read it, and it could not be narrowed: %w", perm, err)
		}
	}
	return nil
}

// narrowPath is narrowFile for a regular file at path, when there is one
// (a symlink is left alone: clawd did not make it).
func narrowPath(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, fi.Mode().Perm()&^0o077); err != nil {
		return fmt.Errorf("%s: mode %04o lets other users read it, and it could not be narrowed: %w", filepath.Base(path), fi.Mode().Perm(), err)
	}
	return nil
}
