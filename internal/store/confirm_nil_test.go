package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/token"
)

// TestNilConfirmsAreSkipped: every change's confirms are run by
// runConfirms, which skips a nil one; a revocation and a prune passed nil
// behave as with no confirm, as a server or trust change does.
func TestNilConfirmsAreSkipped(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, filepath.Join(t.TempDir(), "clawd.db"))
	id, digest, _ := token.NewClientCredential()
	if err := db.AddCredential(ctx, Credential{ID: id, WorkspaceID: "ws-1", Kind: "cc"}, digest, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RevokeCredential(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PruneAudit(ctx, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
}
