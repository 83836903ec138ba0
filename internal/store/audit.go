package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawde/clawd/internal/chain"
)

// Group commit tuning.
const (
	// maxBatch caps the decisions of one transaction.
	maxBatch = 256
	// outcomeDelay is how long outcome updates, which nobody waits for,
	// may wait for a decision to share its commit. Under load the next
	// decision comes sooner; an idle server commits them after this delay.
	outcomeDelay = 2 * time.Millisecond
)

// ErrWriterClosed is returned by Record after the writer was closed.
var ErrWriterClosed = errors.New("audit log is closed")

// Writer is the process's one audit writer (chain.AuditLog). It owns one
// database connection, on which one transaction runs at a time, and it
// commits each decision before Record returns.
//
// A caller that finds no transaction running commits its row itself, on
// its own goroutine, together with the outcomes waiting. Callers arriving
// while a transaction runs queue their rows and wait; when it ends, the
// writer goroutine takes over and commits everything queued in one
// transaction (group commit), letting the callers that are about to queue
// do so first, and goes on while rows keep queueing. So a lone caller
// never hands its row to another goroutine and back (each hand-off wakes a
// thread: over stdio that, not SQLite, was most of the audit's cost), and N
// callers arriving together still share a few commits.
//
// Outcomes do not wake anyone: they wait in a list for the next commit, and
// a timer has the writer goroutine commit them if no decision comes within
// outcomeDelay.
type Writer struct {
	db     *DB
	conn   *auditConn // used by whoever set busy
	argBuf []driver.NamedValue
	ckpt   *sql.DB
	log    *slog.Logger
	pid    int64

	mu     sync.Mutex
	idle   sync.Cond    // broadcast when busy ends (close waits on it)
	busy   bool         // a transaction is running or the writer goroutine has the queue
	recs   []*auditReq  // decisions waiting; empty whenever !busy
	outs   []outcomeReq // outcome updates waiting
	oldest time.Time    // when the oldest of outs was queued
	armed  bool         // timer is set
	timer  *time.Timer  // runs outcomeTimer
	closed bool

	kick chan struct{} // wakes the writer goroutine; closed by close
	done chan struct{} // closed when the writer goroutine has exited
	one  [1]*auditReq  // a lone caller's batch (used while busy)

	stopCkpt chan struct{}
	ckptDone chan struct{}
	dirty    atomic.Bool

	commits, rows atomic.Int64
	handoffs      atomic.Int64 // transactions run by the writer goroutine (tests)
}

// auditReq is a decision to insert; a queued caller waits on done.
type auditReq struct {
	rec  *chain.AuditRecord
	id   int64 // the new row's id
	err  error
	done chan struct{}
}

// outcomeReq is an outcome to record on row id.
type outcomeReq struct {
	id int64
	o  chain.Outcome
}

// Audit returns the process's audit writer, starting it on first use.
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
		kick: make(chan struct{}, 1), done: make(chan struct{}),
		stopCkpt: make(chan struct{}), ckptDone: make(chan struct{}),
	}
	w.idle.L = &w.mu
	w.timer = time.AfterFunc(time.Hour, w.outcomeTimer)
	w.timer.Stop()
	go w.run()
	go w.checkpoints(db.opts.CheckpointEvery)
	db.writer = w
	return w, nil
}

// Record implements chain.AuditLog: it returns once r is committed.
func (w *Writer) Record(r *chain.AuditRecord) (int64, error) {
	req := &auditReq{rec: r}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return 0, ErrWriterClosed
	}
	if w.busy {
		req.done = make(chan struct{})
		w.recs = append(w.recs, req)
		w.mu.Unlock()
		<-req.done
		return req.id, req.err
	}
	w.busy = true
	outs := w.outs
	w.outs = nil
	w.mu.Unlock()
	w.one[0] = req
	w.commit(w.one[:], outs)
	w.one[0] = nil
	w.release(outs)
	return req.id, req.err
}

// release ends a transaction run on a caller's goroutine: rows queued
// meanwhile go to the writer goroutine, which stays busy for them. outs,
// committed, is kept for reuse.
func (w *Writer) release(outs []outcomeReq) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recycleLocked(outs)
	if len(w.recs) > 0 {
		w.kickLocked()
		return
	}
	w.busy = false
	w.armLocked()
	w.idle.Broadcast()
}

// recycleLocked keeps a committed outcome list's storage for the next
// outcomes, so steady traffic does not allocate one per commit.
func (w *Writer) recycleLocked(outs []outcomeReq) {
	if w.outs == nil && cap(outs) > 0 && cap(outs) <= 4*maxBatch {
		clear(outs)
		w.outs = outs[:0]
	}
}

// kickLocked wakes the writer goroutine; w.mu is held and busy is set on
// its behalf.
func (w *Writer) kickLocked() {
	select {
	case w.kick <- struct{}{}:
	default: // already woken
	}
}

// RecordOutcome implements chain.AuditLog: it queues the update for the
// next commit and returns without waking anyone.
func (w *Writer) RecordOutcome(id int64, o chain.Outcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		w.log.Warn("audit outcome not recorded", "id", id, "outcome", o.Result, "err", ErrWriterClosed)
		return
	}
	if len(w.outs) == 0 {
		w.oldest = time.Now()
	}
	w.outs = append(w.outs, outcomeReq{id, o})
	w.armLocked()
}

// armLocked sets the timer when outcomes wait, nobody is committing and
// it is not set. Under steady load it stays set: it fires about every
// outcomeDelay, finds the queue young and sets itself again.
func (w *Writer) armLocked() {
	if len(w.outs) > 0 && !w.busy && !w.armed && !w.closed {
		w.armed = true
		w.timer.Reset(outcomeDelay)
	}
}

// outcomeTimer has the writer goroutine commit outcomes that waited
// outcomeDelay without a decision to share a commit with.
func (w *Writer) outcomeTimer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if w.busy || w.closed || len(w.outs) == 0 {
		return // the transaction running (or close) takes them
	}
	if age := time.Since(w.oldest); age < outcomeDelay {
		w.armed = true
		w.timer.Reset(outcomeDelay - age)
		return
	}
	w.busy = true
	w.kickLocked()
}

// Stats reports the transactions committed and the rows (inserts and
// outcome updates) they carried.
func (w *Writer) Stats() (commits, rows int64) { return w.commits.Load(), w.rows.Load() }

// run is the writer goroutine: each kick hands it the queue (busy is set
// for it). It commits what is queued until, after a commit, no caller
// queued anything while it yielded once; then it gives busy up.
func (w *Writer) run() {
	defer close(w.done)
	batch := make([]*auditReq, 0, maxBatch)
	for range w.kick {
		for {
			// The callers the last commit woke (or the caller that kicked
			// this goroutine) are runnable and about to queue their next
			// rows; let them, so those share the next commit. Cheap when
			// nobody else is runnable.
			runtime.Gosched()
			w.mu.Lock()
			if len(w.recs) == 0 && len(w.outs) == 0 {
				w.busy = false
				w.armLocked()
				w.idle.Broadcast()
				w.mu.Unlock()
				break
			}
			n, all := min(len(w.recs), maxBatch), len(w.recs)
			batch = append(batch[:0], w.recs[:n]...)
			w.recs = append(w.recs[:0], w.recs[n:]...)
			clear(w.recs[len(w.recs):all]) // no stale references to served callers
			outs := w.outs
			w.outs = nil
			w.mu.Unlock()
			w.handoffs.Add(1)
			w.commit(batch, outs)
			clear(batch)
			w.mu.Lock()
			w.recycleLocked(outs)
			w.mu.Unlock()
		}
	}
}

// close commits everything queued, then stops the writer goroutine and the
// checkpointer and closes the connection. Records that started before
// close are committed; later ones fail with ErrWriterClosed.
func (w *Writer) close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.timer.Stop()
	for w.busy {
		w.idle.Wait() // queued decisions are committed before busy ends
	}
	w.busy = true // for good: nothing may use the connection now
	outs := w.outs
	w.outs = nil
	w.mu.Unlock()
	w.commit(nil, outs)
	close(w.kick)
	<-w.done
	close(w.stopCkpt)
	<-w.ckptDone
	return w.conn.close()
}

// commit writes the decisions of batch and the outcomes in one transaction
// and wakes the queued callers among batch.
func (w *Writer) commit(batch []*auditReq, outs []outcomeReq) {
	if len(batch)+len(outs) == 0 {
		return
	}
	err := w.write(batch, outs)
	for _, r := range batch {
		if err != nil {
			r.id, r.err = 0, err
		}
		if r.done != nil {
			close(r.done)
		}
	}
}

// write runs one transaction.
func (w *Writer) write(batch []*auditReq, outs []outcomeReq) error {
	n := 0
	began := time.Since(w.db.opened)
	_, err := exec(w.conn.begin, nil)
	if err == nil {
		// Holding the write lock, this connection sees every commit that
		// finished before BEGIN: publish the registry generation so calls
		// need not read it themselves (DB.freshGeneration).
		if g, err := w.conn.generation(); err == nil {
			w.db.observe(g, began)
		}
		for _, o := range outs {
			if err := w.update(o.id, o.o); err != nil {
				w.log.Warn("audit outcome not recorded", "id", o.id, "err", err)
			} else {
				n++
			}
		}
		for _, r := range batch {
			r.id, r.err = w.insert(r.rec)
			if r.err == nil {
				n++
			}
		}
		if _, err = exec(w.conn.commit, nil); err != nil {
			exec(w.conn.rollback, nil)
		}
	}
	if err != nil {
		w.log.Error("audit log commit failed", "rows", len(batch)+len(outs), "err", err)
		return err
	}
	w.commits.Add(1)
	w.rows.Add(int64(n))
	w.dirty.Store(true)
	return nil
}

func (w *Writer) insert(r *chain.AuditRecord) (int64, error) {
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	var level driver.Value
	if r.TrustLevel != chain.NoTrustLevel {
		level = int64(r.TrustLevel)
	}
	w.argBuf = args(w.argBuf, formatTime(t), r.EntityID, r.ToolID, level, r.Result, r.Reason,
		(r.Latency + 500*time.Microsecond).Milliseconds(), r.Latency.Microseconds(),
		r.Step, r.Transport, r.RequestID, w.pid, nullText(r.ClientClaim), nullText(r.CredentialID),
		nullText(r.ArgsSHA256), nullText(r.ArgsSummary), nullText(r.Server))
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
