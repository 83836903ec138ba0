package store

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/rawio"
)

// The decision journal: how an audit row is made durable before its tool
// runs without a SQLite commit on the call's path (docs/security.md, "The
// audit log").
//
// Each process that records decisions appends them, one JSON line each, to
// a journal file of its own, with one write(2) before Record returns; the
// line is then in the operating system's hands, as a committed WAL frame is
// under synchronous=NORMAL, so a kill -9 of the process right after loses
// nothing. The process folds its journal into cd_policy_audit_log within
// foldDelay, in one transaction that also records in cd_audit_journal how
// far the file is folded, so no line is inserted twice. The owner holds an
// exclusive lock on its file for as long as it lives; a file whose lock can
// be taken belongs to a process that died, and whoever takes the lock first
// folds the rest of it (recoverOrphans) and removes it.
//
// Limits: a line is at most maxJournalLine bytes: Record refuses a longer
// one, which recovery could not read back (the chain clips the caller's
// text far below that); a trailing line without its newline is a write the
// crash cut, whose Record never returned, and is dropped.

const (
	// journalExt ends every journal file's name: PID-NANOS-RANDOM.journal.
	journalExt = ".journal"
	// maxJournalLine bounds one line read back from a journal.
	maxJournalLine = 1 << 20
	// rotateAt is the size past which a journal gets no more lines: a
	// new one takes them, and the old one is removed once its lines are
	// folded, so a long-running daemon's files stay small.
	rotateAt = 4 << 20
	// newJournalAge is how long an empty journal may be a new one whose
	// owner has yet to lock it: recovery leaves it that long.
	newJournalAge = time.Minute
	// maxJournalFile is more than any journal holds: a file takes lines
	// until it reaches rotateAt, the last one at most maxJournalLine long.
	// Recovery does not read a larger file (anything with a journal's name
	// in the directory, which a program running as the user can put
	// there: a sparse file of terabytes would be read, holding the
	// database's write lock, for as long as that takes).
	maxJournalFile = rotateAt + maxJournalLine
)

// syncDir makes the entries of dir durable (tests replace it).
var syncDir = syncDirOS

// journalDir is the directory of the decision journals of the database at
// dbPath: beside it, private like it.
func journalDir(dbPath string) string { return dbPath + ".audit" }

// CheckJournalDir makes sure a decision journal can be created beside the
// database (its directory made if missing, a file created and removed),
// and returns the directory. Without one every call is refused, since no
// decision could be recorded (`clawd doctor` runs it).
func (db *DB) CheckJournalDir() (string, error) {
	dir := journalDir(db.path)
	if err := fileutil.MkdirPrivate(dir); err != nil {
		return dir, err
	}
	f, err := os.CreateTemp(dir, "doctor-*.tmp")
	if err != nil {
		return dir, err
	}
	f.Close()
	return dir, os.Remove(f.Name())
}

// journalLine is one decision as journaled: the row's column values.
type journalLine struct {
	Seq          int64  `json:"seq"`
	PID          int64  `json:"pid"`
	Timestamp    string `json:"ts"`
	EntityID     string `json:"entity"`
	ToolID       string `json:"tool"`
	TrustLevel   *int64 `json:"level,omitempty"`
	Result       string `json:"result"`
	Reason       string `json:"reason"`
	LatencyNS    int64  `json:"latency_ns"`
	Step         string `json:"step"`
	Transport    string `json:"transport"`
	RequestID    string `json:"request_id"`
	ClientClaim  string `json:"client_claim,omitempty"`
	CredentialID string `json:"credential_id,omitempty"`
	ArgsSHA256   string `json:"args_sha256,omitempty"`
	ArgsSummary  string `json:"args_summary,omitempty"`
	Server       string `json:"server,omitempty"`

	awaits bool         // an outcome will follow (chain.AuditRecord.AwaitsOutcome)
	j      *journalFile // the journal it was written to (Record)
	end    int64        // j's offset after the line
}

// lineOf is r as a journal line of process pid (Seq is set by Record).
func lineOf(r *chain.AuditRecord, pid int64) *journalLine {
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	l := &journalLine{
		PID: pid, Timestamp: formatTime(t), EntityID: r.EntityID, ToolID: r.ToolID, Result: r.Result,
		Reason: r.Reason, LatencyNS: int64(r.Latency), Step: r.Step, Transport: r.Transport,
		RequestID: r.RequestID, ClientClaim: r.ClientClaim, CredentialID: r.CredentialID,
		ArgsSHA256: r.ArgsSHA256, ArgsSummary: r.ArgsSummary, Server: r.Server,
	}
	if r.TrustLevel != chain.NoTrustLevel {
		v := int64(r.TrustLevel)
		l.TrustLevel = &v
	}
	return l
}

// journalFile is the journal a Writer appends to.
type journalFile struct {
	f       *os.File
	name    string // base name: the key of its cd_audit_journal row
	size    int64  // bytes of complete lines written
	pending int    // its lines not yet folded (Writer.mu)
	// raw: appends are raw system calls (a local disk), which do not wake
	// the Go runtime's monitor thread on the call's path (rawio).
	raw bool
}

// createJournal creates and locks a new journal in dir for process pid.
// With sync, the new name is made durable too (dir and its parent synced),
// or a power loss could take the file, and the lines fsynced into it, away.
func createJournal(dir string, pid int64, sync bool) (*journalFile, error) {
	if err := fileutil.MkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("audit journal directory: %w", err)
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	name := fmt.Sprintf("%d-%d-%s%s", pid, time.Now().UnixNano(), hex.EncodeToString(rnd[:]), journalExt)
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit journal: %w", err)
	}
	if err := fileutil.MakePrivate(f.Name(), false); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("audit journal: %w", err)
	}
	if ok, err := fileutil.TryLock(f); !ok || err != nil {
		f.Close()
		os.Remove(f.Name())
		if err == nil {
			err = errors.New("a new file is locked by another process")
		}
		return nil, fmt.Errorf("audit journal: locking %s: %w", name, err)
	}
	if sync {
		if err := errors.Join(syncDir(dir), syncDir(filepath.Dir(dir))); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, fmt.Errorf("audit journal: syncing its directory: %w", err)
		}
	}
	return &journalFile{f: f, name: name, raw: rawio.LocalDisk(f)}, nil
}

// append writes line (which ends in a newline) with one write. A failed
// write is undone, so the file holds only complete lines; if it cannot be
// undone the journal is unusable and the error says so.
func (j *journalFile) append(line []byte, sync bool) error {
	var n int
	var err error
	if j.raw {
		n, err = rawio.Append(j.f, line)
	} else {
		n, err = j.f.Write(line)
	}
	if err == nil && sync {
		err = j.f.Sync()
		if err != nil {
			n = len(line) // written but not known durable: take it back
		}
	}
	if err != nil {
		if n > 0 {
			if terr := j.f.Truncate(j.size); terr != nil {
				return &brokenJournalError{err: fmt.Errorf("%w; and taking the partial line back failed: %v", err, terr)}
			}
		}
		return err
	}
	j.size += int64(n)
	return nil
}

// brokenJournalError means the journal may end in a partial line: every
// later Record fails.
type brokenJournalError struct{ err error }

func (e *brokenJournalError) Error() string { return "audit journal: " + e.err.Error() }
func (e *brokenJournalError) Unwrap() error { return e.err }

// isJournalName reports whether name is a journal's file name as
// createJournal makes them, so nothing else in the directory is read.
func isJournalName(name string) bool {
	base, ok := strings.CutSuffix(name, journalExt)
	if !ok {
		return false
	}
	parts := strings.Split(base, "-")
	if len(parts) != 3 || len(parts[2]) != 8 {
		return false
	}
	for _, p := range parts[:2] {
		// At most 19 digits, as %d writes an int64: ParseUint alone takes
		// any number of leading zeros, and a name longer than
		// cd_audit_journal takes could never be folded.
		if _, err := strconv.ParseUint(p, 10, 63); err != nil || len(p) > 19 {
			return false
		}
	}
	_, err := hex.DecodeString(parts[2])
	return err == nil
}

// journalReader reads complete lines from a journal, from a given offset
// up to a given end.
type journalReader struct {
	r   *bufio.Reader
	off int64 // offset of the next line
}

// newJournalReader reads f's lines from off; a line that runs past end
// counts as cut (io.EOF), as at the file's end. Recovery reads up to the
// size the file had once it held the lock: a dead owner writes nothing
// more, and whatever another program appends meanwhile cannot keep the
// read, and the transaction it runs in, going.
func newJournalReader(f io.ReaderAt, off, end int64) *journalReader {
	return &journalReader{r: bufio.NewReaderSize(io.NewSectionReader(f, off, max(end-off, 0)), 64<<10), off: off}
}

// next returns the next complete line; jr.off is then its end. A line longer
// than maxJournalLine or not valid JSON is returned with bad set (and
// skipped by the caller); io.EOF comes at the end, or at a trailing line
// the crash cut before its newline.
func (jr *journalReader) next() (l *journalLine, bad bool, err error) {
	var buf []byte
	var n int64 // bytes of this line so far
	long := false
	for {
		chunk, err := jr.r.ReadSlice('\n')
		n += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			if !long && len(buf)+len(chunk) <= maxJournalLine {
				buf = append(buf, chunk...)
			} else {
				long, buf = true, nil
			}
			continue
		}
		if err != nil { // io.EOF: an unfinished line is not consumed
			return nil, false, err
		}
		jr.off += n
		if long || len(buf)+len(chunk) > maxJournalLine {
			return nil, true, nil
		}
		buf = append(buf, chunk...)
		l = new(journalLine)
		if json.Unmarshal(buf, l) != nil || !validLine(l) {
			return nil, true, nil
		}
		return l, false, nil
	}
}

// validLine checks what the table's constraints would refuse, so one bad
// line cannot fail the transaction that folds the good ones.
func validLine(l *journalLine) bool {
	return (l.Result == chain.ResultAllow || l.Result == chain.ResultDeny) && l.Timestamp != ""
}

// removeJournal closes j (releasing its lock), removes it and then its
// cd_audit_journal row. Its lines must all be folded. The order matters:
// a process that opened the file before the removal and locks it after
// finds it gone (foldOrphan checks inside its transaction) or, if not yet,
// finds the row still there saying everything is folded. The removal is
// synced before the row goes (dropRemoved), so a power loss cannot bring
// the file back without its row, to be folded again. foldMu is held.
func (w *Writer) removeJournal(j *journalFile) {
	j.f.Close()
	if err := os.Remove(filepath.Join(w.dir, j.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.log.Warn("audit journal not removed; the next start removes it", "file", j.name, "err", err)
		return
	}
	if err := w.dropRemoved(j.name); err != nil {
		w.log.Warn("audit journal row not removed", "file", j.name, "err", err)
	}
}

// dropRemoved drops the row of journal name, which was just removed, once
// the removal is durable; if it cannot be made so, the row stays (a row
// without its file is harmless, a file without its row would be folded
// again from its start).
func (w *Writer) dropRemoved(name string) error {
	if err := syncDir(w.dir); err != nil {
		return fmt.Errorf("syncing the journal directory: %w", err)
	}
	return w.dropJournalRow(name)
}

func (w *Writer) dropJournalRow(name string) error {
	if _, err := exec(w.conn.begin, nil); err != nil {
		return err
	}
	if _, err := exec(w.conn.dropJournal, args(w.argBuf, name)); err != nil {
		exec(w.conn.rollback, nil)
		return err
	}
	if _, err := exec(w.conn.commit, nil); err != nil {
		exec(w.conn.rollback, nil)
		return err
	}
	return nil
}

// ownJournal reports whether name is a journal this writer holds.
func (w *Writer) ownJournal(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.j != nil && w.j.name == name {
		return true
	}
	for _, j := range w.retired {
		if j.name == name {
			return true
		}
	}
	return false
}

// listJournals returns the journal names in the directory, and the
// directory opened as a root (nil when it does not exist).
func (w *Writer) listJournals() (*os.Root, []string) {
	root, err := os.OpenRoot(w.dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			w.log.Warn("audit journal directory unreadable", "dir", w.dir, "err", err)
		}
		return nil, nil
	}
	d, err := root.Open(".")
	if err != nil {
		root.Close()
		return nil, nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		w.log.Warn("audit journal directory unreadable", "dir", w.dir, "err", err)
	}
	out := names[:0]
	for _, n := range names {
		if isJournalName(n) && !w.ownJournal(n) {
			out = append(out, n)
		}
	}
	// By name: one process's journals (PID-NANOS-...) in the order it
	// wrote them, so recovery gives their rows ids in decision order.
	slices.Sort(out)
	return root, out
}

// recoverOrphans folds and removes the journals of processes that died
// (their lock is free). foldMu is held.
func (w *Writer) recoverOrphans() {
	root, names := w.listJournals()
	if root == nil {
		return
	}
	defer root.Close()
	for _, name := range names {
		if err := w.foldOrphan(root, name); err != nil {
			w.log.Warn("audit journal of an ended process not folded; the next start retries", "file", name, "err", err)
		}
	}
}

// foldOrphan folds the rest of journal name if its owner is gone, in
// transactions of maxFoldRows lines, then removes it. Lines that cannot be
// read are skipped and counted in a warning. foldMu is held.
func (w *Writer) foldOrphan(root *os.Root, name string) error {
	f, err := root.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // another process folded it meanwhile
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return err
	}
	// createJournal creates a journal, then locks it: an empty one this
	// new may be a live owner's, not locked yet. Taking its lock would
	// fail the owner's Record; removing it would leave the owner appending
	// to a file no name leads to. (An owner writes only once it holds the
	// lock, so a file with a line in it was locked.)
	if fi.Size() == 0 && time.Since(fi.ModTime()) < newJournalAge {
		return nil
	}
	if ok, err := fileutil.TryLock(f); !ok {
		return err // its owner lives (nil), or the lock failed
	}
	// Its size now is its final one: its owner is gone.
	if fi, err = f.Stat(); err != nil {
		return err
	}
	if fi.Size() > maxJournalFile {
		w.log.Warn("a file with an audit journal's name is larger than any journal; it is left unread (remove it if no clawd wrote it)",
			"file", name, "bytes", fi.Size(), "max", maxJournalFile)
		return nil
	}
	folded, bad := 0, 0
	for {
		done, n, b, err := w.foldOrphanBatch(root, name, f, fi)
		folded, bad = folded+n, bad+b
		if err == errJournalMoved {
			return nil // not the file at name: neither folded nor removed
		}
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	if folded > 0 || bad > 0 {
		w.log.Warn("folded the audit journal of an ended process", "file", name, "rows", folded, "unreadable_lines", bad)
	}
	f.Close()
	if err := root.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return w.dropRemoved(name)
}

// errJournalMoved: the file opened is no longer the one at its name
// (another process folded and removed it; or the name is a link).
var errJournalMoved = errors.New("audit journal is no longer at its name")

// foldOrphanBatch folds up to maxFoldRows lines of f (journal name) from
// where it was folded to, up to fi.Size(), in one transaction; done says
// that end was reached. errJournalMoved says f is not (or no longer) the file at
// name, so nothing may be folded under that name, nor the name removed.
func (w *Writer) foldOrphanBatch(root *os.Root, name string, f *os.File, fi os.FileInfo) (done bool, n, bad int, err error) {
	if _, err := exec(w.conn.begin, nil); err != nil {
		return false, 0, 0, err
	}
	fail := func(err error) (bool, int, int, error) {
		exec(w.conn.rollback, nil)
		return false, 0, 0, err
	}
	// Under the write lock: if another process folded and removed the
	// file since we opened it, its row may be gone too; fold nothing. A
	// name that is a link to another file (a journal's lines under two
	// names would be folded twice) is not a journal either.
	if cur, err := root.Lstat(name); err != nil || !os.SameFile(fi, cur) {
		exec(w.conn.rollback, nil)
		return false, 0, 0, errJournalMoved
	}
	off, err := w.conn.foldedTo(name, w.argBuf)
	if err != nil {
		return fail(err)
	}
	jr := newJournalReader(f, off, fi.Size())
	// Unreadable lines count toward the batch too: a file of nothing else
	// is still read a batch per transaction, not in one.
	for n+bad < maxFoldRows {
		l, isBad, err := jr.next()
		if err == io.EOF {
			done = true
			break
		}
		if err != nil {
			return fail(err)
		}
		if isBad {
			bad++
			continue
		}
		if _, err := w.insert(l); err != nil {
			return fail(err)
		}
		n++
	}
	if jr.off != off {
		if _, err := exec(w.conn.setFolded, args(w.argBuf, name, jr.off)); err != nil {
			return fail(err)
		}
	}
	if _, err := exec(w.conn.commit, nil); err != nil {
		return fail(err)
	}
	if n > 0 {
		w.commits.Add(1)
		w.rows.Add(int64(n))
		w.dirty.Store(true)
	}
	return done, n, bad, nil
}

// awaited is, of the journal names in root, the files a live process may
// be folding, with their sizes. Only a regular file of a journal's size
// can be a live process's journal: a directory or symlink with a
// journal's name, or a file larger than any journal (which recovery
// leaves), would cost every read syncWait.
func awaited(root *os.Root, names []string) map[string]int64 {
	want := map[string]int64{}
	for _, name := range names {
		if fi, err := root.Lstat(name); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 && fi.Size() <= maxJournalFile {
			want[name] = fi.Size()
		}
	}
	return want
}

// waitLive waits until every other live process's journal is folded as
// far as it was written when waitLive began: until ctx ends or syncWait
// passes, checking each millisecond.
func (w *Writer) waitLive(ctx context.Context) {
	root, names := w.listJournals()
	if root == nil {
		return
	}
	defer root.Close()
	want := awaited(root, names)
	deadline := time.NewTimer(syncWait)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for len(want) > 0 {
		for name, size := range want {
			var folded int64
			err := w.db.rdb.QueryRowContext(ctx, sqlFolded, name).Scan(&folded)
			if err == nil && folded >= size {
				delete(want, name)
			} else if _, serr := root.Lstat(name); errors.Is(serr, os.ErrNotExist) {
				delete(want, name) // folded and removed
			}
		}
		if len(want) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			w.log.Debug("audit: other processes' journals not folded in time", "journals", len(want))
			return
		case <-tick.C:
		}
	}
}
