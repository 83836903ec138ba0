package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/store"
)

// TestAuditPruneIsAudited: rows are deleted only by clawd audit prune, and
// a prune leaves a row that says how many went and from before when
// (local:cli, tool audit:prune), written before the deletion commits:
// when it cannot be written nothing is deleted. An agent that prunes the
// log through bash cannot do it without a trace in the log itself.
func TestAuditPruneIsAudited(t *testing.T) {
	ownHome(t)
	run := runCLI
	for _, level := range []string{"1", "2"} {
		if code, msg := run("trust", "set", "local:x", level); code != 0 {
			t.Fatalf("trust set: exit %d: %s", code, msg)
		}
	}
	p, err := config.DefaultPaths()
	if err != nil {
		t.Fatal(err)
	}
	tools := func() []string {
		db, err := store.Open(p.DBFile, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.QueryAudit(context.Background(), store.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.ToolID+" "+r.Reason)
		}
		return out
	}
	journal := p.DBFile + ".audit"
	if err := os.RemoveAll(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(journal, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, msg := run("audit", "prune", "--older-than", "2099-01-01"); code == 0 || !strings.Contains(msg, "not made") {
		t.Errorf("audit prune without its own row: exit %d: %s", code, msg)
	}
	os.Remove(journal)
	if got := tools(); len(got) != 2 {
		t.Fatalf("rows after a prune that could not be audited: %q", got)
	}
	if code, msg := run("audit", "prune", "--older-than", "2099-01-01"); code != 0 {
		t.Fatalf("audit prune: exit %d: %s", code, msg)
	}
	got := tools()
	if len(got) != 2 || !strings.HasPrefix(got[0], "trust:local:x configure: level 2") ||
		!strings.HasPrefix(got[1], "audit:prune prune: deleted 1 rows written before 209") {
		t.Errorf("rows after the prune: %q, want the newest row kept and the prune's own", got)
	}
}
