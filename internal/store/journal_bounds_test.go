package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// While folds fail, the decisions waiting for one are bounded: past the
// backlog Record refuses (so the chain refuses the call) and says why,
// instead of every call keeping its line in memory until the database
// comes back. Once a fold succeeds, decisions are taken again, and none
// of the ones journaled before is lost.
func TestAuditBacklogRefusesWhileFoldsFail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w := pausedWriter(t, db)
	w.mu.Lock()
	w.backlog = 3
	w.mu.Unlock()
	w.foldMu.Lock()
	w.failWrite = func() error { return errors.New("database is locked (by the test)") }
	w.foldMu.Unlock()
	for i := 1; i <= 3; i++ {
		if _, err := w.Record(auditRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.fold(); err == nil {
		t.Fatal("the fold succeeded; the test needs it to fail")
	}
	_, err := w.Record(auditRecord(4))
	if err == nil || !strings.Contains(err.Error(), "3 decisions wait") || !strings.Contains(err.Error(), "database is locked (by the test)") {
		t.Fatalf("Record past the backlog = %v, want a refusal naming the backlog and the fold's error", err)
	}
	w.foldMu.Lock()
	w.failWrite = nil
	w.foldMu.Unlock()
	if err := w.fold(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Record(auditRecord(5)); err != nil {
		t.Fatalf("Record after a fold caught up = %v", err)
	}
	if err := w.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := requestIDs(t, db); got != "1 2 3 5" {
		t.Errorf("rows = %q, want 1 2 3 5 (4 was refused)", got)
	}
}

// An ended process's journal is folded maxFoldRows lines per transaction,
// unreadable lines included: a file of nothing but unreadable lines must
// not be read in one transaction that holds the database's write lock.
func TestAuditOrphanBatchCountsUnreadableLines(t *testing.T) {
	const name = "4242-1700000000000000000-0badc0de.journal"
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w := pausedWriter(t, db)
	body := strings.Repeat("\x00\x00\n", 2*maxFoldRows+3) + line(t, 1, 4242)
	if err := os.MkdirAll(journalDir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(journalDir(path), name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(journalDir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	w.foldMu.Lock()
	defer w.foldMu.Unlock()
	var batches, rows, bad int
	for done := false; !done; batches++ {
		d, n, b, err := w.foldOrphanBatch(root, name, f, fi)
		if err != nil {
			t.Fatal(err)
		}
		if n+b > maxFoldRows {
			t.Fatalf("one transaction read %d lines (%d unreadable), over the %d a batch may", n+b, b, maxFoldRows)
		}
		done, rows, bad = d, rows+n, bad+b
	}
	if rows != 1 || bad != 2*maxFoldRows+3 || batches < 3 {
		t.Fatalf("folded %d rows and %d unreadable lines in %d batches, want 1, %d and at least 3", rows, bad, batches, 2*maxFoldRows+3)
	}
}
