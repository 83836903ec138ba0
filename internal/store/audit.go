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
	// maxBatch caps the rows of one transaction.
	maxBatch = 256
	// outcomeDelay is how long outcome updates, which nobody waits for,
	// may wait for a decision to share its commit. Under load the next
	// decision comes sooner; an idle server commits them after this delay.
	outcomeDelay = 2 * time.Millisecond
)

// ErrWriterClosed is returned by Record after the writer was closed.
var ErrWriterClosed = errors.New("audit log is closed")

// Writer is the process's one audit writer (chain.AuditLog). A goroutine
// owns one database connection; callers hand it rows over a channel. It
// takes every row waiting when a transaction starts into that transaction
// (group commit), and wakes each caller after COMMIT returns, so N calls
// arriving together cost one commit, and a caller never proceeds on a row
// that is not committed.
type Writer struct {
	db     *DB
	conn   *auditConn
	argBuf []driver.NamedValue
	ckpt   *sql.DB
	log    *slog.Logger
	pid    int64

	ch     chan *auditReq
	mu     sync.RWMutex // senders hold R while sending; close holds W
	closed bool
	done   chan struct{}

	stopCkpt chan struct{}
	ckptDone chan struct{}
	dirty    atomic.Bool

	commits, rows atomic.Int64
}

// auditReq is one unit of work for the writer: a decision to insert (the
// sender waits on done), an outcome to record (nobody waits), or stop.
type auditReq struct {
	rec *chain.AuditRecord

	id      int64 // outcome: the row to update; insert: the new row's id
	outcome chain.Outcome

	done chan struct{} // closed after COMMIT (inserts and stop)
	err  error
	stop bool
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
		ch: make(chan *auditReq, 4*maxBatch), done: make(chan struct{}),
		stopCkpt: make(chan struct{}), ckptDone: make(chan struct{}),
	}
	go w.run()
	go w.checkpoints(db.opts.CheckpointEvery)
	db.writer = w
	return w, nil
}

// Record implements chain.AuditLog: it returns once r is committed.
func (w *Writer) Record(r *chain.AuditRecord) (int64, error) {
	req := &auditReq{rec: r, done: make(chan struct{})}
	if err := w.send(req); err != nil {
		return 0, err
	}
	<-req.done
	return req.id, req.err
}

// RecordOutcome implements chain.AuditLog: it queues the update and returns.
func (w *Writer) RecordOutcome(id int64, o chain.Outcome) {
	if err := w.send(&auditReq{id: id, outcome: o}); err != nil {
		w.log.Warn("audit outcome not recorded", "id", id, "outcome", o.Result, "err", err)
	}
}

// Stats reports the transactions committed and the rows (inserts and
// outcome updates) they carried.
func (w *Writer) Stats() (commits, rows int64) { return w.commits.Load(), w.rows.Load() }

func (w *Writer) send(r *auditReq) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return ErrWriterClosed
	}
	w.ch <- r
	return nil
}

// close commits everything queued, then stops the goroutines.
func (w *Writer) close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	stop := &auditReq{stop: true, done: make(chan struct{})}
	w.ch <- stop // every earlier send has completed: senders hold R
	w.mu.Unlock()
	<-w.done
	close(w.stopCkpt)
	<-w.ckptDone
	return w.conn.close()
}

func (w *Writer) run() {
	defer close(w.done)
	batch := make([]*auditReq, 0, maxBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		batch = append(batch[:0], <-w.ch)
		// The sender that woke us usually hands over its processor; let the
		// other runnable callers enqueue their rows first so they share
		// this commit. Costs ~100 ns when nobody else is runnable.
		runtime.Gosched()
		batch = w.fill(batch, nil)
		if !urgent(batch) {
			timer.Reset(outcomeDelay)
			batch = w.fill(batch, timer.C)
			timer.Stop()
		}
		if w.commit(batch) {
			return
		}
	}
}

// urgent reports whether someone waits on the batch.
func urgent(batch []*auditReq) bool {
	for _, r := range batch {
		if r.done != nil {
			return true
		}
	}
	return false
}

// fill adds queued requests to batch. Without wait it takes only what is
// already queued; with wait it blocks until an urgent request arrives, the
// batch is full, or wait fires.
func (w *Writer) fill(batch []*auditReq, wait <-chan time.Time) []*auditReq {
	for len(batch) < maxBatch {
		if wait == nil {
			select {
			case r := <-w.ch:
				batch = append(batch, r)
			default:
				return batch
			}
			continue
		}
		select {
		case r := <-w.ch:
			batch = append(batch, r)
			if r.done != nil {
				return w.fill(batch, nil)
			}
		case <-wait:
			return batch
		}
	}
	return batch
}

// commit writes batch in one transaction and wakes the waiters. It reports
// whether the batch held the stop request.
func (w *Writer) commit(batch []*auditReq) (stop bool) {
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
		for _, r := range batch {
			switch {
			case r.stop:
			case r.rec != nil:
				r.id, r.err = w.insert(r.rec)
				if r.err == nil {
					n++
				}
			default:
				if err := w.update(r.id, r.outcome); err != nil {
					w.log.Warn("audit outcome not recorded", "id", r.id, "err", err)
				} else {
					n++
				}
			}
		}
		if _, err = exec(w.conn.commit, nil); err != nil {
			exec(w.conn.rollback, nil)
		}
	}
	if err != nil {
		w.log.Error("audit log commit failed", "rows", len(batch), "err", err)
	} else {
		w.commits.Add(1)
		w.rows.Add(int64(n))
		w.dirty.Store(true)
	}
	for _, r := range batch {
		if r.stop {
			stop = true
		}
		if err != nil && r.rec != nil {
			r.id, r.err = 0, err
		}
		if r.done != nil {
			close(r.done)
		}
	}
	return stop
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
		r.Step, r.Transport, r.RequestID, w.pid)
	res, err := exec(w.conn.ins, w.argBuf)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
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
