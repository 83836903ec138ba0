package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/netguard"
)

// A consent the CLI records (an egress origin, an executable's hash) is
// not stored when its audit row cannot be written, and the command fails
// saying so; once rows can be written again the same command stores it
// with its row.
func TestCLIConsentFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	// A file where the audit journal's directory belongs: no decision can
	// be journaled, whoever runs this (root included).
	journal := path + ".audit"
	if err := os.RemoveAll(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(journal, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := netguard.ParseOrigin("https://api.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := allowEgress(db, o, false); err == nil || !strings.Contains(err.Error(), "not made") {
		t.Fatalf("egress allow without an audit row: %v", err)
	}
	if rows, err := db.EgressAllowlist(ctx); err != nil || len(rows) != 0 {
		t.Fatalf("egress allowlist after a failed audit: %v %v", rows, err)
	}
	sum := strings.Repeat("ab", 32)
	row := auditCLI(db, "mcp:tool", chain.ResultAllow, "approve: sha256 "+sum)
	_, err = db.Approve(ctx, "tool", sum, nil, row.confirm)
	row.done(err)
	if err == nil {
		t.Fatal("approve without an audit row succeeded")
	}
	if rows, err := db.Allowlist(ctx); err != nil || len(rows) != 0 {
		t.Fatalf("allowlist after a failed audit: %v %v", rows, err)
	}

	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if changed, err := allowEgress(db, o, false); err != nil || !changed {
		t.Fatalf("egress allow: %v %v", changed, err)
	}
	if changed, err := allowEgress(db, o, false); err != nil || changed {
		t.Fatalf("egress allow again: %v %v", changed, err)
	}
	var rows []store.AuditRow
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if rows, err = db.QueryAudit(ctx, store.AuditFilter{Tool: "egress:" + o.String()}); err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 && rows[0].Outcome != nil {
			break
		}
	}
	if len(rows) != 1 || rows[0].EntityID != "local:cli" || rows[0].Reason != "approve: egress to "+o.String() ||
		rows[0].Outcome == nil || *rows[0].Outcome != chain.OutcomeOK {
		t.Fatalf("audit rows %+v (one, with outcome ok, wanted: a change that changes nothing has none)", rows)
	}
}

// The outcome of a change that failed after its row was written names the
// error, masked: it can quote the URL or command line the change was given.
func TestCLIOutcomeDetailMasked(t *testing.T) {
	const secret = "hunter2hunter2"
	got := cliOutcomeDetail(errors.New("commit: mysql -p" + secret + " --host db\nsecond line"))
	if strings.Contains(got, secret) || strings.Contains(got, "\n") {
		t.Errorf("outcome detail %q: want the password masked and one line", got)
	}
}
