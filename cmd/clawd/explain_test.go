package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/store"
)

// TestExplainTrustCountsBindings: a binding grants its upstream tools
// whatever the row's level (chain.Evaluate), so a level-0 row that binds
// tools can call them: doctor must not say it may call no tool, and only
// a row that grants nothing at all gets that problem.
func TestExplainTrustCountsBindings(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "clawd.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.SetTrust(ctx, chain.TrustEntry{Entity: "cc:bound", Level: 0, Perms: map[string]string{"gh__*": chain.PermBind}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetTrust(ctx, chain.TrustEntry{Entity: "cc:nothing", Level: 0, Perms: map[string]string{"bash": chain.PermDeny}}); err != nil {
		t.Fatal(err)
	}
	if st := explainTrust(db, "cc:bound", config.Default()); strings.Contains(st.Problem, "no tool") {
		t.Errorf("a level-0 row with bindings: %q", st.Problem)
	}
	if st := explainTrust(db, "cc:nothing", config.Default()); !strings.Contains(st.Problem, "no tool") {
		t.Errorf("a level-0 row that grants nothing: %q", st.Problem)
	}
}
