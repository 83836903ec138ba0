package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
)

// journalFiles lists the files in the journal directory of the database at path.
func journalFiles(t *testing.T, path string) []string {
	t.Helper()
	ents, err := os.ReadDir(journalDir(path))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// requestIDs is the audit log's request ids, oldest first, as QueryAudit
// (which folds the journals first) returns them.
func requestIDs(t *testing.T, db *DB) string {
	t.Helper()
	rows, err := db.QueryAudit(context.Background(), AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.RequestID)
	}
	return strings.Join(ids, " ")
}

// line is journal line i as Record writes it, for process pid.
func line(t *testing.T, i int, pid int64) string {
	t.Helper()
	l := lineOf(auditRecord(i), pid)
	l.Seq = int64(i)
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// pausedWriter is db's audit writer with its fold timer set to an hour, so
// nothing is folded but what the test folds (fold, Sync, close).
func pausedWriter(t *testing.T, db *DB) *Writer {
	t.Helper()
	w, err := db.Audit()
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.delay = time.Hour
	w.mu.Unlock()
	return w
}

// journalRows counts the cd_audit_journal rows of the database at path.
func journalRows(t *testing.T, path string) int {
	t.Helper()
	var n int
	if err := raw(t, path).QueryRow(`SELECT count(*) FROM cd_audit_journal`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

const journalChildEnv = "CLAWD_TEST_JOURNAL_CHILD"

// The guarantee the journal exists for: once Record returned, a kill -9 of
// the process loses nothing. A child process records five decisions (with
// no fold before the kill, each in a journal of its own) and kills itself;
// the next process to open the database folds them, once, with the child's
// pid, and removes the files.
func TestAuditJournalSurvivesKill9(t *testing.T) {
	if path := os.Getenv(journalChildEnv); path != "" {
		db, err := Open(path, Options{})
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		w, err := db.Audit()
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		w.mu.Lock()
		w.delay = time.Hour
		w.rotate = 1 // a journal per decision: recovery folds every file
		w.mu.Unlock()
		for i := 1; i <= 5; i++ {
			if _, err := w.Record(auditRecord(i)); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
		}
		p, _ := os.FindProcess(os.Getpid())
		p.Kill()
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	path := filepath.Join(t.TempDir(), "clawd.db")
	cmd := osexec.Command(os.Args[0], "-test.run=^TestAuditJournalSurvivesKill9$")
	cmd.Env = append(os.Environ(), journalChildEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != -1 && runtime.GOOS != "windows" {
		t.Fatalf("child did not die by a signal: %v\n%s", err, out)
	}
	if len(journalFiles(t, path)) != 5 {
		t.Fatalf("journal files after the kill: %v, want the child's five", journalFiles(t, path))
	}
	db := openTest(t, path)
	if got := requestIDs(t, db); got != "1 2 3 4 5" {
		t.Errorf("rows after the kill = %q, want 1 2 3 4 5", got)
	}
	rows, _ := db.QueryAudit(context.Background(), AuditFilter{PID: int64(cmd.Process.Pid)})
	if len(rows) != 5 {
		t.Errorf("%d rows carry the child's pid %d, want 5", len(rows), cmd.Process.Pid)
	}
	if f := journalFiles(t, path); len(f) != 0 {
		t.Errorf("journal files left after folding: %v", f)
	}
	if got := requestIDs(t, openTest(t, path)); got != "1 2 3 4 5" {
		t.Errorf("rows after a second start = %q: folded twice?", got)
	}
	if n := journalRows(t, path); n != 0 {
		t.Errorf("%d cd_audit_journal rows left", n)
	}
}

// One table of journals left by processes that died, run through the
// recovery a starting process does: what is folded, what is skipped, and
// that nothing is folded twice.
func TestAuditJournalRecovery(t *testing.T) {
	const name = "4242-1700000000000000000-0badc0de.journal"
	l1, l2, l3 := line(t, 1, 4242), line(t, 2, 4242), line(t, 3, 4242)
	badResult := strings.Replace(line(t, 9, 4242), `"result":"Allow"`, `"result":"Maybe"`, 1)
	tests := []struct {
		name   string
		body   string
		folded int64 // the cd_audit_journal row, -1 for none
		want   string
	}{
		{"complete lines", l1 + l2 + l3, -1, "1 2 3"},
		{"a trailing line the crash cut", l1 + l2 + l3[:len(l3)/2], -1, "1 2"},
		{"a line of zeros", l1 + "\x00\x00\x00\x00\n" + l3, -1, "1 3"},
		{"a result the table refuses", l1 + badResult + l3, -1, "1 3"},
		{"a line over the limit", l1 + `{"seq":` + strings.Repeat("9", maxJournalLine) + "}\n" + l3, -1, "1 3"},
		{"folded up to line 1", l1 + l2 + l3, int64(len(l1)), "2 3"},
		{"folded to the end", l1 + l2 + l3, int64(len(l1 + l2 + l3)), ""},
		{"empty", "", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "clawd.db")
			openTest(t, path).Close() // the schema, for the folded row
			if err := os.MkdirAll(journalDir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(journalDir(path), name), []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			// An ended process's: not one just created, whose owner may
			// be about to lock it (TestAuditRecoveryLeavesAJournalJustCreated).
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(journalDir(path), name), old, old); err != nil {
				t.Fatal(err)
			}
			if tt.folded >= 0 {
				if _, err := raw(t, path).Exec(`INSERT INTO cd_audit_journal VALUES (?, ?)`, name, tt.folded); err != nil {
					t.Fatal(err)
				}
			}
			db := openTest(t, path)
			if got := requestIDs(t, db); got != tt.want {
				t.Errorf("rows = %q, want %q", got, tt.want)
			}
			if f := journalFiles(t, path); len(f) != 0 {
				t.Errorf("journal files left: %v", f)
			}
			if n := journalRows(t, path); n != 0 {
				t.Errorf("%d cd_audit_journal rows left", n)
			}
			if got := requestIDs(t, openTest(t, path)); got != tt.want {
				t.Errorf("rows after a second start = %q, want %q", got, tt.want)
			}
		})
	}
}

// Files that are not journals are neither read nor removed; a symlink named
// like a journal is not followed out of the directory.
func TestAuditJournalRecoveryLeavesOtherFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	openTest(t, path).Close()
	dir := journalDir(path)
	os.MkdirAll(dir, 0o700)
	outside := filepath.Join(t.TempDir(), "outside.journal")
	body := line(t, 1, 7)
	os.WriteFile(outside, []byte(body), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(body), 0o600)
	os.WriteFile(filepath.Join(dir, "1-2-xyz.journal"), []byte(body), 0o600) // not a name createJournal makes
	link := filepath.Join(dir, "7-1700000000000000000-00000000.journal")
	if err := os.Symlink(outside, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	// Inside the directory: a link named like a journal to a file that is
	// not one, and a second name for a real journal (whose lines must be
	// folded once, under the real name).
	os.Symlink("notes.txt", filepath.Join(dir, "8-1700000000000000000-00000000.journal"))
	real := "9-1700000000000000000-00000000.journal"
	os.WriteFile(filepath.Join(dir, real), []byte(line(t, 2, 9)), 0o600)
	os.Symlink(real, filepath.Join(dir, "9-1600000000000000000-00000000.journal"))
	db := openTest(t, path)
	if got := requestIDs(t, db); got != "2" {
		t.Errorf("rows = %q, want the real journal's one row, once", got)
	}
	os.Remove(filepath.Join(dir, "9-1600000000000000000-00000000.journal")) // dangling now; not this test's point
	if b, _ := os.ReadFile(outside); string(b) != body {
		t.Error("the symlink's target was changed")
	}
	if f := journalFiles(t, path); !slices.Equal(f, []string{"1-2-xyz.journal", "7-1700000000000000000-00000000.journal", "8-1700000000000000000-00000000.journal", "notes.txt"}) {
		t.Errorf("files = %v", f)
	}
}

// A live process's journal is its own: another process neither folds it
// nor removes it, and a reader waits (syncWait at most) for the owner's
// fold, so a decision made before a read is in what the read returns.
func TestAuditJournalOfALiveProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	a, b := openTest(t, path), openTest(t, path)
	wa, _ := a.Audit()
	wa.mu.Lock()
	wa.delay = time.Hour
	wa.mu.Unlock()
	for i := 1; i <= 2; i++ {
		if _, err := wa.Record(auditRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if got := requestIDs(t, b); got != "" {
		t.Errorf("b read %q before a folded: it folded a live process's journal", got)
	}
	if waited := time.Since(start); waited < syncWait {
		t.Errorf("b waited %v for a's fold, want syncWait (%v)", waited, syncWait)
	}
	if f := journalFiles(t, path); len(f) != 1 {
		t.Fatalf("journal files = %v, want a's", f)
	}
	// With the normal delay, a's fold comes within the wait.
	wa.mu.Lock()
	wa.delay = foldDelay
	wa.timer.Stop() // the hour-long one set by the first Record
	wa.armed = false
	wa.mu.Unlock()
	if err := wa.fold(); err != nil {
		t.Fatal(err)
	}
	if _, err := wa.Record(auditRecord(3)); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if got := requestIDs(t, b); got != "1 2 3" {
		t.Errorf("b read %q, want 1 2 3", got)
	}
	if waited := time.Since(start); waited >= syncWait {
		t.Errorf("b waited %v for a fold due within %v", waited, foldDelay)
	}
	a.Close()
	if f := journalFiles(t, path); len(f) != 0 {
		t.Errorf("journal files after a closed: %v", f)
	}
	if got := requestIDs(t, b); got != "1 2 3" {
		t.Errorf("after a closed: %q", got)
	}
}

// A journal is replaced once it is past its size limit and fully folded;
// the old one is removed with its row, and no decision is lost or doubled.
func TestAuditJournalRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w, _ := db.Audit()
	w.mu.Lock()
	w.rotate = 1
	w.mu.Unlock()
	names := map[string]bool{}
	for i := 1; i <= 4; i++ {
		if _, err := w.Record(auditRecord(i)); err != nil {
			t.Fatal(err)
		}
		names[w.j.name] = true
		if err := w.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		if f := journalFiles(t, path); len(f) != 1 {
			t.Errorf("after decision %d, journal files = %v, want one", i, f)
		}
	}
	if len(names) != 4 {
		t.Errorf("%d journals for 4 decisions, want a new one each time", len(names))
	}
	if got := requestIDs(t, db); got != "1 2 3 4" {
		t.Errorf("rows = %q", got)
	}
	if n := journalRows(t, path); n != 1 {
		t.Errorf("%d cd_audit_journal rows, want the current journal's", n)
	}
}

// A journal past its size limit gets no more lines even while its own
// lines wait to be folded: under unbroken load there is never a moment
// with nothing waiting, and the one file grew without end. Later lines go
// to new files; each old one is removed with its row once its lines are
// folded (one transaction may fold several), and no decision is lost or
// doubled, also after a restart.
func TestAuditJournalRotatesUnderLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w := pausedWriter(t, db)
	const rotate = 1000
	w.mu.Lock()
	w.rotate = rotate
	w.mu.Unlock()
	var want []string
	for i := 1; i <= 12; i++ {
		if _, err := w.Record(auditRecord(i)); err != nil {
			t.Fatal(err)
		}
		want = append(want, strconv.Itoa(i))
	}
	files := journalFiles(t, path)
	if len(files) < 3 {
		t.Fatalf("journal files with nothing folded: %v, want a new one past every %d bytes", files, rotate)
	}
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(journalDir(path), f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() >= 2*rotate {
			t.Errorf("journal %s has %d bytes: it took lines long past its limit of %d", f, fi.Size(), rotate)
		}
	}
	if err := w.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f := journalFiles(t, path); len(f) != 1 {
		t.Errorf("journal files after the fold: %v, want only the current one", f)
	}
	if n := journalRows(t, path); n != 1 {
		t.Errorf("%d cd_audit_journal rows after the fold, want the current journal's", n)
	}
	if got := requestIDs(t, db); got != strings.Join(want, " ") {
		t.Errorf("rows = %q", got)
	}
	// More lines over several files, then Close: it folds them all and
	// removes every file.
	for i := 13; i <= 20; i++ {
		if _, err := w.Record(auditRecord(i)); err != nil {
			t.Fatal(err)
		}
		want = append(want, strconv.Itoa(i))
	}
	if f := journalFiles(t, path); len(f) < 2 {
		t.Fatalf("journal files before Close: %v, want several", f)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if f := journalFiles(t, path); len(f) != 0 {
		t.Errorf("journal files after Close: %v", f)
	}
	if got := requestIDs(t, openTest(t, path)); got != strings.Join(want, " ") {
		t.Errorf("rows after a restart = %q: lost or folded twice?", got)
	}
}

// A decision that cannot be journaled is refused (the chain then refuses
// the call), and nothing of it reaches the table.
func TestAuditJournalWriteFailureFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w, _ := db.Audit()
	if _, err := w.Record(auditRecord(1)); err != nil {
		t.Fatal(err)
	}
	w.j.f.Close() // the disk gone from under it
	if _, err := w.Record(auditRecord(2)); err == nil {
		t.Fatal("Record succeeded with its journal unwritable")
	}
	rec := auditRecord(3)
	rec.Result = "Maybe"
	if _, err := w.Record(rec); err == nil {
		t.Error("Record took a result the table refuses")
	}
	if got := requestIDs(t, db); got != "1" {
		t.Errorf("rows = %q, want only the journaled decision", got)
	}
}

// Close folds what waits and removes the journal.
func TestAuditCloseFoldsAndRemovesTheJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w := pausedWriter(t, db)
	r := auditRecord(1)
	r.AwaitsOutcome = true
	id, _ := w.Record(r)
	w.RecordOutcome(id, chain.Outcome{Result: chain.OutcomeOK})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if f := journalFiles(t, path); len(f) != 0 {
		t.Errorf("journal files after Close: %v", f)
	}
	rows, _ := openTest(t, path).QueryAudit(context.Background(), AuditFilter{})
	if len(rows) != 1 || rows[0].Outcome == nil || *rows[0].Outcome != chain.OutcomeOK {
		t.Errorf("rows after Close = %+v, want the decision with its outcome", rows)
	}
}

// An outcome waits for its decision's row: when more decisions wait than
// one transaction folds (a burst, or the database busy for a while), the
// outcome of one beyond the first batch is recorded by the batch that folds
// it, not dropped as "no longer tracked".
func TestAuditOutcomeOfADecisionBeyondTheFirstBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w := pausedWriter(t, db)
	var last int64
	for i := 1; i <= maxFoldRows+1; i++ {
		r := auditRecord(i)
		r.AwaitsOutcome = true
		id, err := w.Record(r)
		if err != nil {
			t.Fatal(err)
		}
		last = id
	}
	w.RecordOutcome(last, chain.Outcome{Result: chain.OutcomeSandboxViolation, Detail: "symlink_escape"})
	if err := w.fold(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryAudit(context.Background(), AuditFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].RequestID != fmt.Sprint(maxFoldRows+1) {
		t.Fatalf("rows = %+v, want the last decision", rows)
	}
	if r := rows[0]; r.Outcome == nil || *r.Outcome != chain.OutcomeSandboxViolation || r.Result != chain.ResultDeny {
		t.Errorf("last decision's row = %+v, want its sandbox violation (a Deny)", r)
	}
}

// A decision Record accepts can be read back from the journal after a
// crash: a line over maxJournalLine would be skipped by recovery, so Record
// refuses it (the chain then refuses the call) rather than accept a row a
// kill -9 would lose.
func TestAuditRecordRefusesALineRecoveryCannotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w := pausedWriter(t, db)
	r := auditRecord(1)
	r.RequestID = strings.Repeat("x", maxJournalLine)
	_, rerr := w.Record(r)
	if rerr == nil {
		f, err := os.Open(filepath.Join(journalDir(path), w.j.name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		jr := newJournalReader(f, 0, 2*maxJournalLine)
		if l, bad, err := jr.next(); err != nil || bad || l.RequestID != r.RequestID {
			t.Errorf("Record accepted a decision recovery cannot read back (bad %v, err %v)", bad, err)
		}
	}
	if _, err := w.Record(auditRecord(2)); err != nil {
		t.Fatal(err)
	}
	if got := requestIDs(t, db); rerr != nil && got != "2" {
		t.Errorf("rows = %.40q, want only the decision Record accepted", got)
	}
}

// A read waits only for journal files: a directory or symlink that has a
// journal's name, or a file whose name createJournal cannot have made, is
// no live process's journal, and must not cost every read syncWait.
func TestAuditReadDoesNotWaitForWhatIsNoJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	dir := journalDir(path)
	if err := os.MkdirAll(filepath.Join(dir, "7-1700000000000000000-00000001.journal"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), filepath.Join(dir, "7-1700000000000000000-00000002.journal")); err != nil {
		t.Log("no symlinks here:", err)
	}
	// Numbers padded past what createJournal writes: a name longer than
	// cd_audit_journal takes, so its fold could never commit.
	long := strings.Repeat("0", 120) + "7-1700000000000000000-00000003.journal"
	if err := os.WriteFile(filepath.Join(dir, long), []byte(line(t, 1, 7)), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	requestIDs(t, db)
	if waited := time.Since(start); waited >= syncWait {
		t.Errorf("a read waited %v for files that are no journals", waited)
	}
}

// With SyncFull a journal line is to survive a power loss, and so must its
// file's name: the journal directory is synced once a journal is created,
// before Record returns. A journal's row is dropped only after its removal
// is synced: otherwise a power loss could bring the file back without the
// row that says it is folded, and its lines would be folded twice.
func TestAuditSyncFullSyncsTheJournalDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db, err := Open(path, Options{SyncFull: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other := raw(t, path)
	var syncs []string
	saved := syncDir
	syncDir = func(dir string) error {
		if dir == journalDir(path) {
			var rows int
			other.QueryRow(`SELECT count(*) FROM cd_audit_journal`).Scan(&rows)
			syncs = append(syncs, fmt.Sprintf("files=%d rows=%d", len(journalFiles(t, path)), rows))
		}
		return saved(dir)
	}
	defer func() { syncDir = saved }()
	w, _ := db.Audit()
	if _, err := w.Record(auditRecord(1)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"files=1 rows=0"}; !slices.Equal(syncs, want) {
		t.Errorf("directory syncs by Record = %v, want %v", syncs, want)
	}
	if err := w.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	syncs = nil
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"files=0 rows=1"}; !slices.Equal(syncs, want) {
		t.Errorf("directory syncs by Close = %v, want %v (the file removed, its row not yet)", syncs, want)
	}
}

// A journal exists, empty, a moment before its owner locks it (createJournal
// creates, then locks). Recovery that takes the lock in that moment must
// leave the file: removing it would leave its owner appending to a file no
// name leads to, whose lines a kill -9 would lose. An empty journal that
// is not new is an ended process's, and is removed.
func TestAuditRecoveryLeavesAJournalJustCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	openTest(t, path).Close()
	dir := journalDir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	name := "4242-1700000000000000000-0badc0de.journal"
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	requestIDs(t, openTest(t, path)) // a reader recovers what it can lock
	if f := journalFiles(t, path); !slices.Equal(f, []string{name}) {
		t.Errorf("journal files = %v, want the new one left to its owner", f)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
		t.Fatal(err)
	}
	requestIDs(t, openTest(t, path))
	if f := journalFiles(t, path); len(f) != 0 {
		t.Errorf("journal files = %v, want the old empty one removed", f)
	}
}

// A reader that got the writer before the database closed may call Sync
// after: with an ended process's journal to fold, that must not run a
// statement on the closed connection (the driver panics on one).
func TestAuditSyncAfterCloseDoesNotUseTheClosedConnection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w, err := db.Audit()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	dir := journalDir(path)
	os.MkdirAll(dir, 0o700)
	name := filepath.Join(dir, "4242-1700000000000000000-0badc0de.journal")
	if err := os.WriteFile(name, []byte(line(t, 1, 4242)), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(name, old, old)
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("Sync after Close panicked: %v", p)
			}
		}()
		w.Sync(context.Background())
	}()
	if got := requestIDs(t, openTest(t, path)); got != "1" {
		t.Errorf("rows = %q, want the journal folded by the next process", got)
	}
}
