package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/store"
)

// TestCredentialChangesAreAudited: a per-client credential is who a client
// is, at its kind's level, so issuing and revoking one is on record like a
// trust change: a row (local:cli, tool credential:ID, step auth) written
// inside the change's transaction, or no change. Revoking a revoked
// credential changes nothing and writes nothing.
func TestCredentialChangesAreAudited(t *testing.T) {
	ownHome(t)
	ws := t.TempDir()
	run := runCLI
	p, err := config.DefaultPaths()
	if err != nil {
		t.Fatal(err)
	}
	open := func() *store.DB {
		db, err := store.Open(p.DBFile, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	if code, msg := run("token", "issue", "--client", "cc", "--no-save", "--workspace", ws, "--label", "laptop"); code != 0 {
		t.Fatalf("token issue: exit %d: %s", code, msg)
	}
	creds, err := open().Credentials(context.Background(), "")
	if err != nil || len(creds) != 1 {
		t.Fatalf("credentials %+v %v", creds, err)
	}
	id := creds[0].ID
	for range 2 {
		if code, msg := run("token", "revoke", id); code != 0 {
			t.Fatalf("token revoke: exit %d: %s", code, msg)
		}
	}
	// No row can be written: nothing is issued.
	journal := p.DBFile + ".audit"
	if err := os.RemoveAll(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(journal, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, msg := run("token", "issue", "--client", "cc", "--no-save", "--workspace", ws); code == 0 || !strings.Contains(msg, "not made") {
		t.Errorf("token issue without an audit row: exit %d: %s", code, msg)
	}
	os.Remove(journal)
	db := open()
	if creds, err := db.Credentials(context.Background(), ""); err != nil || len(creds) != 1 {
		t.Errorf("credentials after an issue that could not be audited: %+v %v", creds, err)
	}
	rows, err := db.QueryAudit(context.Background(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("audit rows %+v, want 2", rows)
	}
	for i, want := range []struct{ result, reason string }{
		{chain.ResultAllow, "configure: issued a cc credential for workspace "},
		{chain.ResultDeny, "configure: revoked the cc credential of workspace "},
	} {
		r := rows[i]
		if r.EntityID != "local:cli" || r.ToolID != "credential:"+id || r.Step != chain.StepAuth || r.Result != want.result ||
			!strings.HasPrefix(r.Reason, want.reason) || !strings.HasSuffix(r.Reason, ` (label "laptop")`) || r.Outcome == nil || *r.Outcome != chain.OutcomeOK {
			t.Errorf("row %d: %+v, want %s %q...", i, r, want.result, want.reason)
		}
	}
}
