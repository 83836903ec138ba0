package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
)

func openTest(t *testing.T, path string) *DB {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "data", "clawd.db")
	}
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// raw opens the file with plain SQL, as another process or a hand edit would.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	r, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestOpenCreatesSeedsAndMigratesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "clawd.db")
	db := openTest(t, path)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("database mode = %v, want 0600", st.Mode().Perm())
	}
	if d, _ := os.Stat(filepath.Dir(path)); d.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode = %v, want 0700", d.Mode().Perm())
	}
	rows, err := db.TrustRows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s=%d", r.Entity, r.Level))
	}
	if want := "cc:*=3 local:*=2 oc:*=3"; strings.Join(got, " ") != want {
		t.Errorf("seeded rows = %v, want %s", got, want)
	}
	// The migration's seed and chain.DefaultTrustRows (what in-memory
	// stores start with) must say the same.
	var fromChain []string
	for _, r := range chain.DefaultTrustRows() {
		fromChain = append(fromChain, fmt.Sprintf("%s=%d", r.Entity, r.Level))
	}
	slices.Sort(fromChain)
	if !slices.Equal(got, fromChain) {
		t.Errorf("seeded rows %v differ from chain.DefaultTrustRows %v", got, fromChain)
	}
	var mode string
	raw(t, path).QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}

	// A removed seed row stays removed: seeding happens once, in the
	// first migration, not on every start.
	if ok, err := db.RemoveTrust(context.Background(), "local:*"); !ok || err != nil {
		t.Fatalf("RemoveTrust = %v, %v", ok, err)
	}
	db.Close()
	db2 := openTest(t, path)
	if _, ok, _ := db2.Lookup("local:ws-1"); ok {
		t.Error("local:* came back after reopening")
	}
	var versions int
	raw(t, path).QueryRow(`SELECT count(*) FROM cd_schema_migrations`).Scan(&versions)
	if versions != SchemaVersion {
		t.Errorf("cd_schema_migrations has %d rows, want %d", versions, SchemaVersion)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	openTest(t, path).Close()
	if _, err := raw(t, path).Exec(`INSERT INTO cd_schema_migrations VALUES (?, 'x')`, SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, Options{})
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "upgrade clawd") {
		t.Fatalf("Open = %v, want a newer-schema error", err)
	}
}

func TestOpenRejectsNonDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	os.WriteFile(path, []byte(strings.Repeat("not a database\n", 100)), 0o600)
	_, err := Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open = %v, want an error naming %s", err, path)
	}
}

func TestTrustLookup(t *testing.T) {
	db := openTest(t, "")
	ctx := context.Background()
	if err := db.SetTrust(ctx, chain.TrustEntry{Entity: "device:phone1", Level: 1, Perms: map[string]string{"search": "deny"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetTrust(ctx, chain.TrustEntry{Entity: "cc:ws-1", Level: 1}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		entity string
		ok     bool
		level  int
		perms  string
	}{
		{"cc:ws-1", true, 1, ""},        // exact row beats cc:*
		{"cc:ws-2", true, 3, ""},        // wildcard
		{"local:anything", true, 2, ""}, // seeded wildcard
		{"device:phone1", true, 1, "search=deny"},
		{"device:phone2", false, 0, ""}, // no device:* row
		{"nokind", false, 0, ""},
	}
	for _, tt := range tests {
		e, ok, err := db.Lookup(tt.entity)
		if err != nil {
			t.Fatal(err)
		}
		var perms []string
		for k, v := range e.Perms {
			perms = append(perms, k+"="+v)
		}
		if ok != tt.ok || e.Level != tt.level || strings.Join(perms, ",") != tt.perms {
			t.Errorf("Lookup(%q) = %+v, %v; want level %d perms %q ok %v", tt.entity, e, ok, tt.level, tt.perms, tt.ok)
		}
	}
}

// A change by another process (here: another handle on the file, and a
// plain SQL edit) is seen by every lookup from FreshFor after it on.
func TestTrustChangeSeenByNextLookup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	daemon := openTest(t, path)
	cli := openTest(t, path)
	ctx := context.Background()
	if e, _, _ := daemon.Lookup("cc:ws"); e.Level != 3 {
		t.Fatalf("level = %d, want 3", e.Level)
	}
	if err := cli.SetTrust(ctx, chain.TrustEntry{Entity: "cc:ws", Level: 0}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(FreshFor)
	if e, _, _ := daemon.Lookup("cc:ws"); e.Level != 0 {
		t.Errorf("after SetTrust elsewhere: level = %d, want 0", e.Level)
	}
	if _, err := raw(t, path).Exec(`UPDATE cd_trust_registry SET trust_level = 1 WHERE entity_id = 'cc:ws'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(FreshFor)
	if e, _, _ := daemon.Lookup("cc:ws"); e.Level != 1 {
		t.Errorf("after a SQL edit: level = %d, want 1", e.Level)
	}
	if _, err := cli.RemoveTrust(ctx, "cc:*"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(FreshFor)
	if _, ok, _ := daemon.Lookup("cc:other"); ok {
		t.Error("cc:* removed elsewhere is still found")
	}
}

// A row whose permissions were hand-edited into something unreadable grants
// nothing rather than falling back to a wider wildcard.
func TestTrustBrokenRowGrantsNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	r := raw(t, path)
	// json_valid passes for an object with a non-string value.
	if _, err := r.Exec(`INSERT INTO cd_trust_registry VALUES ('cc:ws', 3, '{"bash":1,"read_file":"ALLOW"}', 'x')`); err != nil {
		t.Fatal(err)
	}
	e, ok, err := db.Lookup("cc:ws")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if e.Perms["bash"] != "deny" || e.Perms["read_file"] != "allow" {
		t.Errorf("perms = %v, want bash=deny (unknown value) read_file=allow (case-folded)", e.Perms)
	}
	if _, err := r.Exec(`INSERT INTO cd_trust_registry VALUES ('oc:ws', 3, '[1]', 'x')`); err == nil {
		t.Error("a non-object permissions value was accepted by the schema")
	}
}

func TestValidateTrust(t *testing.T) {
	tests := []struct {
		e    chain.TrustEntry
		want string // substring of the error; "" = valid
	}{
		{chain.TrustEntry{Entity: "cc:*", Level: 3}, ""},
		{chain.TrustEntry{Entity: "device:Phone_1.a-b", Level: 1, Perms: map[string]string{"bash": "deny", "srv__tool": "allow"}}, ""},
		{chain.TrustEntry{Entity: "cc:ws", Level: 4}, "trust level 4"},
		{chain.TrustEntry{Entity: "cc:ws", Level: -1}, "trust level -1"},
		{chain.TrustEntry{Entity: "ccws", Level: 1}, "KIND:SUBJECT"},
		{chain.TrustEntry{Entity: "claude:ws", Level: 1}, `unknown kind "claude"`},
		{chain.TrustEntry{Entity: "cc:", Level: 1}, "after ':'"},
		{chain.TrustEntry{Entity: "cc:a b", Level: 1}, "after ':'"},
		{chain.TrustEntry{Entity: "cc:a*", Level: 1}, "after ':'"},
		{chain.TrustEntry{Entity: "cc:ws", Level: 1, Perms: map[string]string{"ba sh": "deny"}}, `tool "ba sh"`},
		{chain.TrustEntry{Entity: "cc:ws", Level: 1, Perms: map[string]string{"bash": "maybe"}}, `"maybe" must be allow, deny or bind`},
		{chain.TrustEntry{Entity: "cc:ws", Level: 3, Perms: map[string]string{"gh__issues": "bind", "fs__*": "bind", "x__*": "deny"}}, ""},
		{chain.TrustEntry{Entity: "cc:ws", Level: 1, Perms: map[string]string{"bash": "bind"}}, "only upstream tools"},
		{chain.TrustEntry{Entity: "cc:ws", Level: 3, Perms: map[string]string{"fs*": "bind"}}, "the only pattern is SERVER__*"},
	}
	for _, tt := range tests {
		err := ValidateTrust(tt.e)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("ValidateTrust(%+v) = %v, want %q", tt.e, err, tt.want)
		}
	}
}

func TestAllowlist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	daemon := openTest(t, path)
	cli := openTest(t, path)
	ctx := context.Background()
	sum := strings.Repeat("ab", 32)
	if ok, _ := daemon.ServerAllowed("fs", sum); ok {
		t.Fatal("allowed before allowlisting")
	}
	if added, err := cli.AllowServer(ctx, "fs", sum); !added || err != nil {
		t.Fatalf("AllowServer = %v, %v", added, err)
	}
	if added, err := cli.AllowServer(ctx, "fs", sum); added || err != nil {
		t.Fatalf("second AllowServer = %v, %v; want false, nil", added, err)
	}
	time.Sleep(FreshFor)
	if ok, _ := daemon.ServerAllowed("fs", sum); !ok {
		t.Error("not allowed after allowlisting elsewhere")
	}
	if ok, _ := daemon.ServerAllowed("other", sum); ok {
		t.Error("hash allowed for a different server id")
	}
	list, _ := daemon.Allowlist(ctx)
	if len(list) != 1 || list[0].Server != "fs" || list[0].SHA256 != sum {
		t.Errorf("Allowlist = %+v", list)
	}
	for _, bad := range []string{"", "AB" + sum[2:], sum[:63], sum + "0", strings.Repeat("g", 64)} {
		if _, err := cli.AllowServer(ctx, "fs", bad); err == nil || !strings.Contains(err.Error(), "64 hexadecimal") {
			t.Errorf("AllowServer(%q) = %v, want a hash error", bad, err)
		}
	}
	if _, err := cli.AllowServer(ctx, "bad id", sum); err == nil {
		t.Error("AllowServer accepted a server id with a space")
	}
	if n, err := cli.DisallowServer(ctx, "fs", ""); n != 1 || err != nil {
		t.Errorf("DisallowServer = %d, %v", n, err)
	}
	time.Sleep(FreshFor)
	if ok, _ := daemon.ServerAllowed("fs", sum); ok {
		t.Error("still allowed after removal")
	}
}

func auditRecord(i int) *chain.AuditRecord {
	return &chain.AuditRecord{
		Time: time.Now(), EntityID: "local:ws", ToolID: "read_file", TrustLevel: 2,
		Result: chain.ResultAllow, Reason: "trust_level_default_allow", Step: chain.StepHandler,
		Transport: "stdio", RequestID: fmt.Sprint(i), Latency: 1500 * time.Microsecond,
	}
}

// Record runs no SQLite transaction: the decision is in the journal when
// it returns, and in the table after the fold (here forced by Sync, as
// every reader does), with the values it was given.
func TestAuditRecordIsJournaledOnReturn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w, err := db.Audit()
	if err != nil {
		t.Fatal(err)
	}
	w.delay = time.Hour   // no fold but the one Sync runs
	other := raw(t, path) // another connection sees only committed data
	for i := 1; i <= 3; i++ {
		if _, err := w.Record(auditRecord(i)); err != nil {
			t.Fatal(err)
		}
		journal, err := os.ReadFile(filepath.Join(journalDir(path), w.j.name))
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(journal, []byte("\n")); got != i {
			t.Fatalf("after %d Records the journal holds %d lines", i, got)
		}
	}
	if c, _ := w.Stats(); c != 0 {
		t.Errorf("%d transactions ran on Record's path, want none", c)
	}
	if err := w.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := other.Query(`SELECT request_id, latency_ms, latency_us, pid FROM cd_policy_audit_log ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		i++
		var rid string
		var lms, lus, pid int64
		if err := rows.Scan(&rid, &lms, &lus, &pid); err != nil {
			t.Fatal(err)
		}
		if rid != fmt.Sprint(i) || lms != 2 || lus != 1500 || pid != int64(os.Getpid()) {
			t.Errorf("row %d = %s %d %d %d", i, rid, lms, lus, pid)
		}
	}
	if i != 3 {
		t.Errorf("%d rows after Sync, want 3", i)
	}
	if c, r := w.Stats(); c != 1 || r != 3 {
		t.Errorf("Stats = %d commits, %d rows; want the 3 rows in 1 fold", c, r)
	}
}

func TestAuditNullTrustLevelAndTimestamp(t *testing.T) {
	db := openTest(t, "")
	w, _ := db.Audit()
	rec := auditRecord(1)
	rec.TrustLevel = chain.NoTrustLevel
	rec.Result = chain.ResultDeny
	rec.Time = time.Date(2026, 6, 1, 12, 0, 0, 123456789, time.FixedZone("x", 2*3600))
	if _, err := w.Record(rec); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.QueryAudit(context.Background(), AuditFilter{})
	if len(rows) != 1 || rows[0].TrustLevel != nil || rows[0].Timestamp != "2026-06-01T10:00:00.123Z" || rows[0].Result != "Deny" {
		t.Errorf("row = %+v", rows)
	}
}

func TestAuditOutcome(t *testing.T) {
	db := openTest(t, "")
	w, _ := db.Audit()
	rec := func(i int) *chain.AuditRecord {
		r := auditRecord(i)
		r.AwaitsOutcome = true // an allowed call: the chain's Finish follows
		return r
	}
	ok, _ := w.Record(rec(1))
	bad, _ := w.Record(rec(2))
	w.RecordOutcome(ok, chain.Outcome{Result: chain.OutcomeOK, Duration: 7 * time.Millisecond})
	w.RecordOutcome(bad, chain.Outcome{Result: chain.OutcomeSandboxViolation, Detail: "symlink escapes"})
	// Outcomes are asynchronous; they are folded within foldDelay.
	deadline := time.Now().Add(2 * time.Second)
	var rows []AuditRow
	for time.Now().Before(deadline) {
		rows, _ = db.QueryAudit(context.Background(), AuditFilter{})
		if len(rows) == 2 && rows[0].Outcome != nil && rows[1].Outcome != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if len(rows) != 2 || rows[0].Outcome == nil || rows[1].Outcome == nil {
		t.Fatalf("outcomes not recorded: %+v", rows)
	}
	if r := rows[0]; *r.Outcome != "ok" || *r.DurationMS != 7 || r.Result != "Allow" || r.Step != "handler" || r.OutcomeDetail != nil {
		t.Errorf("ok row = %+v", r)
	}
	if r := rows[1]; *r.Outcome != "sandbox_violation" || r.Result != "Deny" || r.Step != "sandbox" || r.Reason != "symlink escapes" {
		t.Errorf("violation row = %+v", r)
	}
}

// Concurrent callers share folds; each gets its own row.
func TestAuditGroupCommit(t *testing.T) {
	db := openTest(t, "")
	w, _ := db.Audit()
	const n = 400
	var wg sync.WaitGroup
	ids := make(chan int64, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := w.Record(auditRecord(i))
			if err != nil {
				t.Error(err)
			}
			ids <- id
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if id == 0 || seen[id] {
			t.Fatalf("id %d duplicated or zero", id)
		}
		seen[id] = true
	}
	if err := w.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	commits, rows := w.Stats()
	if rows != n || commits > n/2 {
		t.Errorf("Stats = %d commits for %d rows; want all rows in at most n/2 commits", commits, rows)
	}
	t.Logf("%d rows in %d commits", rows, commits)
}

// Decisions and outcomes that arrive within a fold's delay share one
// transaction, and the timer folds them without anyone asking.
func TestAuditFoldBatchesDecisionsAndOutcomes(t *testing.T) {
	db := openTest(t, "")
	w, _ := db.Audit()
	w.mu.Lock()
	w.delay = 50 * time.Millisecond
	w.mu.Unlock()
	for i := 0; i < 20; i++ {
		r := auditRecord(i)
		r.AwaitsOutcome = true
		id, err := w.Record(r)
		if err != nil {
			t.Fatal(err)
		}
		w.RecordOutcome(id, chain.Outcome{Result: chain.OutcomeOK})
	}
	waitOutcome(t, db, 20)
	commits, rows := w.Stats()
	// 20 decisions and their 20 outcomes: in one fold unless this machine
	// stalled for 50 ms in the loop above.
	if rows != 40 || commits > 2 {
		t.Errorf("Stats = %d commits, %d rows; want 40 rows in 1 (at most 2) commits", commits, rows)
	}
	if len(w.rowids) != 0 {
		t.Errorf("%d decisions still tracked after their outcomes", len(w.rowids))
	}
}

// waitOutcome waits (2 s at most) until n rows have an outcome.
func waitOutcome(t *testing.T, db *DB, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		rows, err := db.QueryAudit(context.Background(), AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, r := range rows {
			if r.Outcome != nil {
				got++
			}
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d rows have an outcome after 2 s", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAuditClosed(t *testing.T) {
	db := openTest(t, "")
	w, _ := db.Audit()
	w.RecordOutcome(1, chain.Outcome{Result: "ok"})
	db.Close()
	if _, err := w.Record(auditRecord(1)); !errors.Is(err, ErrWriterClosed) {
		t.Errorf("Record after Close = %v, want ErrWriterClosed", err)
	}
	if _, err := db.Audit(); !errors.Is(err, ErrWriterClosed) {
		t.Errorf("Audit after Close = %v", err)
	}
}

// Two processes' writers (two DB handles on one file, each with its own
// journal and connection) take turns without failing.
func TestAuditTwoWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	a, b := openTest(t, path), openTest(t, path)
	wa, _ := a.Audit()
	wb, _ := b.Audit()
	const per = 300
	var wg sync.WaitGroup
	for _, w := range []*Writer{wa, wb} {
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < per/4; i++ {
					if _, err := w.Record(auditRecord(i)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	// Meanwhile the CLI edits the registry.
	for i := 0; i < 20; i++ {
		if err := a.SetTrust(context.Background(), chain.TrustEntry{Entity: "cc:x", Level: i % 4}); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
	for _, w := range []*Writer{wa, wb} {
		if err := w.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	raw(t, path).QueryRow(`SELECT count(*) FROM cd_policy_audit_log`).Scan(&n)
	if n != 2*per {
		t.Errorf("%d rows, want %d", n, 2*per)
	}
}

func TestQueryAudit(t *testing.T) {
	db := openTest(t, "")
	w, _ := db.Audit()
	for i, e := range []string{"cc:a", "cc:b", "local:a", "cc:a"} {
		r := auditRecord(i)
		r.EntityID = e
		if i%2 == 1 {
			r.Result, r.ToolID = chain.ResultDeny, "bash"
		}
		if _, err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		f    AuditFilter
		want string // request ids in order
	}{
		{AuditFilter{}, "0 1 2 3"},
		{AuditFilter{Limit: 2}, "2 3"},
		{AuditFilter{Entity: "cc:a"}, "0 3"},
		{AuditFilter{Entity: "cc:*"}, "0 1 3"},
		{AuditFilter{Tool: "bash"}, "1 3"},
		{AuditFilter{Result: "Allow"}, "0 2"},
		{AuditFilter{Entity: "cc:*", Result: "Deny", Limit: 1}, "3"},
		{AuditFilter{Entity: "oc:*"}, ""},
	}
	for _, tt := range tests {
		rows, err := db.QueryAudit(context.Background(), tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.RequestID)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("QueryAudit(%+v) = %v, want %s", tt.f, got, tt.want)
		}
	}
}

// The audit writer publishes the generation with each fold, so a busy
// daemon seldom queries it; a registry change still reaches the next
// decision after the next fold or FreshFor, whichever first.
func TestGenerationPiggybacksOnAuditCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	daemon, cli := openTest(t, path), openTest(t, path)
	w, _ := daemon.Audit()
	ctx := context.Background()
	if _, err := w.Record(auditRecord(1)); err != nil {
		t.Fatal(err)
	}
	if err := w.fold(); err != nil {
		t.Fatal(err)
	}
	st := daemon.seen.Load()
	if st == nil {
		t.Fatal("the writer published no generation")
	}
	g, _ := daemon.Generation()
	if st.gen != g {
		t.Errorf("published generation %d, database has %d", st.gen, g)
	}
	if err := cli.SetTrust(ctx, chain.TrustEntry{Entity: "cc:ws", Level: 1}); err != nil {
		t.Fatal(err)
	}
	// The next fold (of another call's decision) carries the change.
	if _, err := w.Record(auditRecord(2)); err != nil {
		t.Fatal(err)
	}
	if err := w.fold(); err != nil {
		t.Fatal(err)
	}
	if e, _, _ := daemon.Lookup("cc:ws"); e.Level != 1 {
		t.Errorf("after an audit commit: level %d, want 1", e.Level)
	}
}
