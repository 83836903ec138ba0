package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawde/clawd/internal/chain"
)

const (
	// foldDelay is how long a journaled decision or an outcome waits to be
	// folded into cd_policy_audit_log: everything that arrives meanwhile
	// shares the transaction. Under load the timer fires about every
	// foldDelay; an idle writer sleeps. Durability does not depend on it
	// (the journal is written before the tool runs): it sets how soon
	// another SQLite reader sees a row, and how much CPU the folds take
	// from calls. At 2 ms the folds' transactions took a processor from
	// the client and the upstream on 2-core machines: 10 ms took 13 us off
	// a proxied call (docs/benchmarks.md, "Fewer folds").
	foldDelay = 10 * time.Millisecond
	// foldRetry is the wait after a fold failed (the database busy beyond
	// BusyTimeout, the disk full): the journal keeps the decisions.
	foldRetry = 250 * time.Millisecond
	// maxFoldRows caps the journal lines of one transaction.
	maxFoldRows = 1024
	// maxBacklog bounds the journaled decisions waiting to be folded. Past
	// it Record refuses (and so the chain refuses the call) until a fold
	// succeeds: while folding fails (the database locked by another
	// program, the disk full) each call would otherwise keep its line in
	// memory, without end. At 1,000 calls/s it is about a minute of
	// failing folds, a few tens of MB.
	maxBacklog = 1 << 16
	// maxAwaiting bounds the decisions kept for an outcome still to come;
	// past it the oldest half is forgotten (their outcomes are logged, not
	// recorded). Only a caller that never finishes its calls reaches it.
	maxAwaiting = 1 << 16
	// syncWait bounds how long Sync waits for other live processes to
	// fold their journals.
	syncWait = 250 * time.Millisecond
)

// ErrWriterClosed is returned by Record after the writer was closed.
var ErrWriterClosed = errors.New("audit log is closed")

// Writer is the process's one audit writer (chain.AuditLog).
//
// Record makes a decision durable before it returns by appending it to the
// process's decision journal (journal.go) with one write: no SQLite
// transaction and no hand-off to another goroutine on the call's path. A
// timer folds what was journaled into cd_policy_audit_log within foldDelay,
// with the outcomes that arrived meanwhile, in one transaction on the
// writer's own connection; that transaction also reads the registry
// generation, so a busy daemon seldom reads it on a call's path
// (DB.freshGeneration). Readers of the table see a row once it is folded:
// QueryAudit first calls Sync, which folds this process's journal, folds
// the journals of processes that died, and waits (syncWait at most) for
// live ones to fold theirs, so `clawd audit` shows every decision made
// before it ran, unless a live process could not fold within syncWait
// (the database busy, its folds failing, or the process stopped): those
// rows come later.
type Writer struct {
	db     *DB
	conn   *auditConn // used by whoever holds foldMu
	argBuf []driver.NamedValue
	ckpt   *sql.DB
	log    *slog.Logger
	pid    int64
	dir    string        // the journal directory
	sync   bool          // fsync each journal line (Options.SyncFull)
	delay  time.Duration // foldDelay (tests set it)
	rotate int64         // rotateAt (tests set it)
	// backlog is maxBacklog, and failWrite, when set, fails every fold
	// before it begins (tests set both).
	backlog   int
	failWrite func() error

	mu      sync.Mutex
	j       *journalFile   // this process's journal; nil until the first Record
	retired []*journalFile // fully folded journals to close and remove
	rotated []*journalFile // replaced journals with lines still to fold
	seq     int64          // the last sequence number given out
	lineBuf []byte         // Record's line buffer, reused (up to 64 KiB)
	pending []*journalLine // journaled, not folded, in order (of rotated's files, then j's)
	outs    []outcomeReq   // outcomes waiting for the next fold
	armed   bool           // timer is set
	timer   *time.Timer    // runs foldTimer
	closed  bool
	broken  error // a journal write could not be undone: Record fails
	foldErr error // why the last fold failed; nil once one succeeds

	foldMu     sync.Mutex      // held while a transaction runs on conn
	connClosed bool            // conn is closed (close); foldMu guards it
	rowids     map[int64]int64 // sequence -> row id, for decisions awaiting an outcome

	stopCkpt chan struct{}
	ckptDone chan struct{}
	dirty    atomic.Bool

	commits, rows atomic.Int64
}

// outcomeReq is an outcome to record on the row of decision seq.
type outcomeReq struct {
	seq int64
	o   chain.Outcome
}

// Audit returns the process's audit writer, starting it on first use. It
// folds the journals of processes that died first (recoverOrphans).
func (db *DB) Audit() (*Writer, error) {
	db.writerMu.Lock()
	defer db.writerMu.Unlock()
	if db.closed {
		return nil, ErrWriterClosed
	}
	if db.writer != nil {
		return db.writer, nil
	}
	// Checkpoints run on their own goroutine, off the commit path; this
	// large limit is only a backstop should they fall behind.
	conn, err := openAuditConn(db.wdb.Driver(), dsn(db.path, db.opts, false), `PRAGMA wal_autocheckpoint = 10000`)
	if err != nil {
		return nil, err
	}
	w := &Writer{
		db: db, conn: conn, ckpt: db.wdb, log: db.opts.Logger, pid: int64(os.Getpid()),
		dir: journalDir(db.path), sync: db.opts.SyncFull, delay: foldDelay, rotate: rotateAt, backlog: maxBacklog,
		rowids:   map[int64]int64{},
		stopCkpt: make(chan struct{}), ckptDone: make(chan struct{}),
	}
	w.timer = time.AfterFunc(time.Hour, w.foldTimer)
	w.timer.Stop()
	w.foldMu.Lock()
	w.recoverOrphans()
	w.foldMu.Unlock()
	go w.checkpoints(db.opts.CheckpointEvery)
	db.writer = w
	return w, nil
}

// Record implements chain.AuditLog: it returns once r is in the journal
// (and, with Options.SyncFull, on disk). The id it returns is r's
// sequence number in the journal, for RecordOutcome.
func (w *Writer) Record(r *chain.AuditRecord) (int64, error) {
	l := lineOf(r, w.pid)
	if !validLine(l) {
		return 0, fmt.Errorf("audit record: result %q is neither %s nor %s", r.Result, chain.ResultAllow, chain.ResultDeny)
	}
	l.awaits = r.AwaitsOutcome
	body := appendLineBody(make([]byte, 0, 512), l)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrWriterClosed
	}
	if w.broken != nil {
		return 0, w.broken
	}
	if len(w.pending) >= w.backlog {
		why := "the folds are behind"
		if w.foldErr != nil {
			why = "the last fold failed: " + w.foldErr.Error()
		}
		return 0, fmt.Errorf("audit log: %d decisions wait to be folded into the database (%s); calls are refused until a fold catches up", len(w.pending), why)
	}
	if w.j != nil && w.j.size >= w.rotate {
		// Later lines go to a new file. This one goes once its lines are
		// folded, now or after the folds to come: waiting for a moment
		// with nothing to fold would never come under unbroken load, and
		// the file would grow without end.
		if w.j.pending == 0 {
			w.retired = append(w.retired, w.j)
		} else {
			w.rotated = append(w.rotated, w.j)
		}
		w.j = nil
	}
	if w.j == nil {
		j, err := createJournal(w.dir, w.pid, w.sync)
		if err != nil {
			return 0, err
		}
		w.j = j
	}
	l.Seq = w.seq + 1
	buf := append(appendLineHead(w.lineBuf[:0], l.Seq), body...)
	if cap(buf) <= 64<<10 {
		w.lineBuf = buf[:0]
	}
	if len(buf) > maxJournalLine {
		// Recovery would skip it: after a crash the decision would be lost.
		return 0, fmt.Errorf("audit journal: a decision of %d bytes is over the %d a journal line may hold", len(buf), maxJournalLine)
	}
	if err := w.j.append(buf, w.sync); err != nil {
		if _, ok := err.(*brokenJournalError); ok {
			w.broken = err
		}
		return 0, fmt.Errorf("audit journal: %w", err)
	}
	w.seq = l.Seq
	l.j, l.end = w.j, w.j.size
	w.j.pending++
	w.pending = append(w.pending, l)
	w.armLocked()
	return l.Seq, nil
}

// RecordOutcome implements chain.AuditLog: it queues the update for the
// next fold and returns without waiting.
func (w *Writer) RecordOutcome(seq int64, o chain.Outcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		w.log.Warn("audit outcome not recorded", "seq", seq, "outcome", o.Result, "err", ErrWriterClosed)
		return
	}
	w.outs = append(w.outs, outcomeReq{seq, o})
	w.armLocked()
}

// armLocked sets the fold timer when something waits and it is not set.
func (w *Writer) armLocked() {
	if !w.armed && !w.closed && len(w.pending)+len(w.outs) > 0 {
		w.armed = true
		w.timer.Reset(w.delay)
	}
}

// foldTimer folds what waits; after a failure it tries again after
// foldRetry, the decisions staying in the journal meanwhile.
//
// When a fold already runs (another firing's, waiting out BusyTimeout on a
// database another process keeps locked; a Sync's), it does not wait for
// it: that fold arms the timer again when it ends if anything still waits
// (afterFold). Waiting made every firing meanwhile queue a fold of its own,
// each then waiting out BusyTimeout in turn, and close waited for all of
// them: 5 s per decision made while the database was locked.
func (w *Writer) foldTimer() {
	w.mu.Lock()
	w.armed = false
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return // close folds what is left
	}
	if !w.foldMu.TryLock() {
		return
	}
	err := w.foldLocked()
	w.foldMu.Unlock()
	if err != nil && !errors.Is(err, ErrWriterClosed) {
		w.log.Error("audit log fold failed; the decisions stay in the journal and are retried", "err", err)
	}
	w.afterFold(err)
}

// afterFold arms the timer for what came while a fold ran (a firing meanwhile
// found the fold running and left it to this), or, after a failure, to try
// again after foldRetry. foldMu is not held: a firing that finds it held
// knows the holder's afterFold is still to come.
func (w *Writer) afterFold(err error) {
	if errors.Is(err, ErrWriterClosed) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		w.armLocked()
	} else if !w.armed && !w.closed {
		w.armed = true
		w.timer.Reset(foldRetry)
	}
}

// Stats reports the transactions committed and the rows (inserts and
// outcome updates) they carried.
func (w *Writer) Stats() (commits, rows int64) { return w.commits.Load(), w.rows.Load() }

// Sync folds this process's journal now, folds the journals of processes
// that died, and waits, until ctx ends or syncWait passes, for live
// processes to fold what their journals held when it started. Readers call
// it so that a row is there once its call was answered, whichever process
// answered it.
func (w *Writer) Sync(ctx context.Context) error {
	err := w.fold()
	if errors.Is(err, ErrWriterClosed) {
		return err
	}
	w.foldMu.Lock()
	if !w.connClosed {
		w.recoverOrphans()
	}
	w.foldMu.Unlock()
	w.waitLive(ctx)
	return err
}

// fold writes everything waiting in one or more transactions, and closes
// and removes the journals retired meanwhile. After close it does nothing
// and returns ErrWriterClosed: the connection is gone (the driver panics
// on a closed statement).
func (w *Writer) fold() error {
	w.foldMu.Lock()
	err := w.foldLocked()
	w.foldMu.Unlock()
	w.afterFold(err)
	return err
}

// foldLocked is fold with foldMu held.
func (w *Writer) foldLocked() error {
	if w.connClosed {
		return ErrWriterClosed
	}
	for {
		more, err := w.foldOnce()
		w.mu.Lock()
		w.foldErr = err
		w.mu.Unlock()
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	w.mu.Lock()
	retired := w.retired
	w.retired = nil
	w.mu.Unlock()
	for _, j := range retired {
		w.removeJournal(j)
	}
	return nil
}

// foldOnce folds up to maxFoldRows decisions and every outcome waiting;
// more says decisions are left. foldMu is held.
func (w *Writer) foldOnce() (more bool, err error) {
	w.mu.Lock()
	n := min(len(w.pending), maxFoldRows)
	batch := slices.Clone(w.pending[:n])
	outs := w.outs
	w.outs = nil
	if n < len(w.pending) {
		// An outcome whose decision is not in this batch waits for the
		// batch that inserts its row: now it would find none.
		first := w.pending[n].Seq
		now := outs[:0:0]
		for _, o := range outs {
			if o.seq >= first {
				w.outs = append(w.outs, o)
			} else {
				now = append(now, o)
			}
		}
		outs = now
	}
	w.mu.Unlock()
	if len(batch)+len(outs) == 0 {
		return false, nil
	}
	if err := w.write(batch, outs); err != nil {
		w.mu.Lock()
		w.outs = append(outs, w.outs...)
		w.mu.Unlock()
		return false, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range batch {
		l.j.pending--
	}
	clear(w.pending[:n])
	w.pending = append(w.pending[:0], w.pending[n:]...)
	keep := w.rotated[:0]
	for _, j := range w.rotated {
		if j.pending == 0 {
			w.retired = append(w.retired, j) // removed by fold, after this
		} else {
			keep = append(keep, j)
		}
	}
	clear(w.rotated[len(keep):])
	w.rotated = keep
	return len(w.pending) > 0, nil
}

// close folds everything waiting, removes the journal and stops the
// writer. Records that returned before close are folded; later ones fail
// with ErrWriterClosed. If the fold fails the journals stay, for the next
// process to fold.
func (w *Writer) close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.timer.Stop()
	w.mu.Unlock()
	err := w.fold()
	w.foldMu.Lock()
	w.mu.Lock()
	j := w.j
	w.j = nil
	left := w.rotated // lines a failed fold left: only then not empty
	w.rotated = nil
	w.mu.Unlock()
	if j != nil {
		if err == nil {
			w.removeJournal(j)
		} else {
			j.f.Close()
		}
	}
	for _, r := range left {
		r.f.Close() // unlocked: the next process folds what is left
	}
	cerr := w.conn.close()
	w.connClosed = true
	w.foldMu.Unlock()
	close(w.stopCkpt)
	<-w.ckptDone
	return errors.Join(err, cerr)
}

// write runs one transaction: the decisions of batch, each journal they
// come from then folded to the end of its last line in batch, and the
// outcomes.
func (w *Writer) write(batch []*journalLine, outs []outcomeReq) error {
	if w.failWrite != nil {
		if err := w.failWrite(); err != nil {
			return err
		}
	}
	if _, err := exec(w.conn.begin, nil); err != nil {
		return err
	}
	n := 0
	var added []int64
	fail := func(err error) error {
		exec(w.conn.rollback, nil)
		for _, seq := range added {
			delete(w.rowids, seq)
		}
		return err
	}
	for _, l := range batch {
		id, err := w.insert(l)
		if err != nil {
			return fail(err)
		}
		if l.awaits {
			w.rowids[l.Seq] = id
			added = append(added, l.Seq)
		}
		n++
	}
	for i, l := range batch {
		// A batch's lines are in journal order: one run per file.
		if i+1 < len(batch) && batch[i+1].j == l.j {
			continue
		}
		if _, err := exec(w.conn.setFolded, args(w.argBuf, l.j.name, l.end)); err != nil {
			return fail(err)
		}
	}
	for _, o := range outs {
		id, ok := w.rowids[o.seq]
		if !ok {
			w.log.Warn("audit outcome not recorded: its decision is no longer tracked", "seq", o.seq, "outcome", o.o.Result)
			continue
		}
		if err := w.update(id, o.o); err != nil {
			w.log.Warn("audit outcome not recorded", "id", id, "err", err)
		} else {
			n++
		}
	}
	if _, err := exec(w.conn.commit, nil); err != nil {
		return fail(err)
	}
	for _, o := range outs {
		delete(w.rowids, o.seq)
	}
	if len(w.rowids) > maxAwaiting && len(batch) > 0 {
		cut := batch[len(batch)-1].Seq - maxAwaiting/2
		for seq := range w.rowids {
			if seq < cut {
				delete(w.rowids, seq)
			}
		}
		w.log.Warn("audit: forgot the oldest decisions still awaiting an outcome", "awaiting", len(w.rowids))
	}
	w.commits.Add(1)
	w.rows.Add(int64(n))
	w.dirty.Store(true)
	w.publishGeneration()
	return nil
}

// publishGeneration reads the registry generation after a fold's commit,
// with the WAL index header before it, so that calls need not read it
// themselves (DB.freshGeneration): a busy daemon's calls find it fresh,
// and an idle one's next call finds the header unchanged unless another
// commit came. Read before the commit, the header would be this fold's
// own commit away from the one the next call sees.
func (w *Writer) publishGeneration() {
	began := time.Since(w.db.opened)
	h, hok := w.db.wal.look()
	if g, err := w.conn.generation(); err == nil {
		w.db.observe(g, began, h, hok)
	}
}

// insert adds the row of a journaled decision.
func (w *Writer) insert(l *journalLine) (int64, error) {
	var level driver.Value
	if l.TrustLevel != nil {
		level = *l.TrustLevel
	}
	lat := time.Duration(l.LatencyNS)
	w.argBuf = args(w.argBuf, l.Timestamp, l.EntityID, l.ToolID, level, l.Result, l.Reason,
		(lat + 500*time.Microsecond).Milliseconds(), lat.Microseconds(),
		l.Step, l.Transport, l.RequestID, l.PID, nullText(l.ClientClaim), nullText(l.CredentialID),
		nullText(l.ArgsSHA256), nullText(l.ArgsSummary), nullText(l.Server))
	res, err := exec(w.conn.ins, w.argBuf)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// nullText stores "" as NULL: a client that sent no name made no claim.
func nullText(s string) driver.Value {
	if s == "" {
		return nil
	}
	return s
}

// update records an outcome. A sandbox violation found while the handler
// ran (os.Root refused a path, e.g. a symlink swapped after the chain's
// check) turns the decision into a Deny by the sandbox step.
func (w *Writer) update(id int64, o chain.Outcome) error {
	var detail driver.Value
	if o.Detail != "" {
		detail = o.Detail
	}
	violation := o.Result == chain.OutcomeSandboxViolation
	reason := o.Detail
	if reason == "" {
		reason = chain.OutcomeSandboxViolation
	}
	w.argBuf = args(w.argBuf, o.Result, detail, o.Duration.Milliseconds(), violation, reason, id)
	_, err := exec(w.conn.upd, w.argBuf)
	return err
}

// checkpoints folds the WAL into the database file periodically, on a
// connection of its own, so the fsync a checkpoint costs never delays a
// commit that callers wait for. PASSIVE never blocks the writer.
func (w *Writer) checkpoints(every time.Duration) {
	defer close(w.ckptDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stopCkpt:
			return
		case <-t.C:
			if w.dirty.Swap(false) {
				if _, err := w.ckpt.Exec(`PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
					w.log.Warn("audit log checkpoint failed", "err", err)
				}
			}
		}
	}
}
