package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
	root, f, fi := orphanJournal(t, path, name, body)
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

// A file with a journal's name that is larger than any journal (a sparse
// file of terabytes costs its creator nothing, and reading it would hold
// the database's write lock for as long as that takes) is left unread;
// the real journals beside it are folded.
func TestAuditRecoveryLeavesAFileLargerThanAnyJournal(t *testing.T) {
	const big, real = "4242-1700000000000000000-0badc0de.journal", "4243-1700000000000000000-0badc0de.journal"
	path := filepath.Join(t.TempDir(), "clawd.db")
	openTest(t, path).Close()
	dir := journalDir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for name, body := range map[string]string{big: line(t, 1, 4242), real: line(t, 2, 4243)} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if name == big {
			if err := os.Truncate(p, rotateAt+maxJournalLine+1); err != nil { // sparse where it can be
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	db := openTest(t, path)
	if got := requestIDs(t, db); got != "2" {
		t.Errorf("rows = %q, want only the real journal's", got)
	}
	if f := journalFiles(t, path); !slices.Equal(f, []string{big}) {
		t.Errorf("files = %v, want the oversized one left in place", f)
	}
	// Nor does a read wait for it to be folded: no process will.
	w := pausedWriter(t, db)
	root, names := w.listJournals()
	if root == nil {
		t.Fatal("no journal directory")
	}
	defer root.Close()
	if want := awaited(root, names); len(want) != 0 {
		t.Errorf("a read waits for %v", want)
	}
}

// An ended process's journal is read up to the size it had when the lock
// was taken: what another program appends meanwhile cannot keep the read,
// and its transaction, going.
func TestAuditOrphanIsReadToItsSizeAtTheLock(t *testing.T) {
	const name = "4242-1700000000000000000-0badc0de.journal"
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w := pausedWriter(t, db)
	p := filepath.Join(journalDir(path), name)
	root, f, fi := orphanJournal(t, path, name, line(t, 1, 4242)+line(t, 2, 4242))
	a, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString(line(t, 3, 4242))
	a.Close()
	w.foldMu.Lock()
	done, n, bad, err := w.foldOrphanBatch(root, name, f, fi)
	w.foldMu.Unlock()
	if err != nil || !done || n != 2 || bad != 0 {
		t.Errorf("foldOrphanBatch = done %v, %d rows, %d unreadable, %v; want done, 2 rows", done, n, bad, err)
	}
}

// orphanJournal writes body as the journal name of the database at path,
// as an ended process left it, and opens it the way recovery does (through
// the journal directory's root), with its size at that moment. The root and
// the file are closed when the test ends.
func orphanJournal(t *testing.T, path, name, body string) (*os.Root, *os.File, os.FileInfo) {
	t.Helper()
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
	t.Cleanup(func() { root.Close() })
	f, err := root.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return root, f, fi
}
