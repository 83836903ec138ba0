package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestServerIdentityColumns: identity forwarding is off unless set, round
// trips through insert and patch, is validated before and by the schema,
// raises the servers' counter (a daemon applies it live) and cannot be set
// on the built-in row.
func TestServerIdentityColumns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	s, err := db.InsertServer(ctx, NewStdioServer("orders", "/bin/true", nil))
	if err != nil {
		t.Fatal(err)
	}
	if s.IdentityMode != IdentityOff || s.IdentityArg != "" || s.IdentityAudience != "" {
		t.Fatalf("a new server forwards identity: %+v", s.View())
	}
	gen, _ := db.MCPServersGeneration(ctx)
	mode, arg, aud := IdentitySigned, "user_token", "https://orders.internal"
	s, err = db.UpdateServer(ctx, s.ID, MCPServerPatch{IdentityMode: &mode, IdentityArg: &arg, IdentityAudience: &aud})
	if err != nil {
		t.Fatal(err)
	}
	if v := s.View(); v.IdentityMode != "signed" || v.IdentityArg != "user_token" || v.IdentityAudience != aud {
		t.Errorf("after the patch: %+v", v)
	}
	if g, _ := db.MCPServersGeneration(ctx); g == gen {
		t.Error("changing the identity setting did not raise the servers' counter")
	}
	empty := ""
	if s, err = db.UpdateServer(ctx, s.ID, MCPServerPatch{IdentityArg: &empty}); err != nil || s.IdentityArg != "" {
		t.Errorf("clearing the argument: %v %+v", err, s.View())
	}
	for _, p := range []MCPServerPatch{{IdentityMode: ptr("plain")}, {IdentityArg: ptr("a-b")}, {IdentityAudience: ptr("a b")}} {
		if _, err := db.UpdateServer(ctx, s.ID, p); !IsValidation(err) {
			t.Errorf("patch %+v: %v, want a validation error", p, err)
		}
	}
	// The schema holds the same rules for a writer that skips validation.
	r := raw(t, path)
	defer r.Close()
	if _, err := r.Exec(`UPDATE cd_mcp_server SET identity_mode = 'plain' WHERE id = ?`, s.ID); err == nil {
		t.Error("the schema accepted identity_mode 'plain'")
	}
	if _, err := r.Exec(`UPDATE cd_mcp_server SET identity_mode = 'meta' WHERE builtin = 1`); err == nil {
		t.Error("the built-in row's identity setting changed")
	}
}

func ptr(s string) *string { return &s }
