package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
)

// Pruning never lets a row id be given again: an outcome that arrives after
// its decision's row was pruned (a long bash call while `clawd audit prune
// --older-than 0s` ran) must not land on another call's row, which would
// then show the first call's outcome, or turn into a sandbox Deny; and a
// `clawd audit --follow`, which reads the rows after the last id it showed,
// must see the rows written after a prune.
func TestAuditPruneNeverReusesARowID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w := pausedWriter(t, db)
	ctx := context.Background()

	first := auditRecord(1)
	first.AwaitsOutcome = true
	seqA, err := w.Record(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.fold(); err != nil {
		t.Fatal(err)
	}
	shown, err := db.QueryAudit(ctx, AuditFilter{})
	if err != nil || len(shown) != 1 {
		t.Fatalf("rows %v, err %v", shown, err)
	}
	if _, err := db.PruneAudit(ctx, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	second := auditRecord(2)
	second.AwaitsOutcome = true
	if _, err := w.Record(second); err != nil {
		t.Fatal(err)
	}
	if err := w.fold(); err != nil {
		t.Fatal(err)
	}
	// The first call ends now: its os.Root refused a swapped symlink.
	w.RecordOutcome(seqA, chain.Outcome{Result: chain.OutcomeSandboxViolation, Detail: "symlink_escape"})
	if err := w.fold(); err != nil {
		t.Fatal(err)
	}
	all, err := db.QueryAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.RequestID == "2" && (r.Result != chain.ResultAllow || r.Outcome != nil) {
			t.Errorf("the second call's row = %+v: it carries the first call's outcome", r)
		}
	}
	rows, err := db.QueryAudit(ctx, AuditFilter{AfterID: shown[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].RequestID != "2" {
		t.Errorf("rows after id %d = %+v, want the second call's row (a follower would miss it)", shown[0].ID, rows)
	}
}
