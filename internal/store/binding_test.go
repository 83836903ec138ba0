package store

import (
	"context"
	"testing"

	"github.com/clawde/clawd/internal/chain"
)

// TestBindingsRoundTrip: a binding written through UpdateTrust is what the
// chain's Lookup reads back, a row created for an entity starts from its
// KIND:* row (so binding never widens what the entity had), and a value
// this clawd does not know reads as deny.
func TestBindingsRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, "")
	if err := db.SetTrust(ctx, chain.TrustEntry{Entity: "cc:*", Level: 3, Perms: map[string]string{"bash": "deny"}}); err != nil {
		t.Fatal(err)
	}
	err := db.UpdateTrust(ctx, "cc:ws", func(cur chain.TrustEntry, from string) (chain.TrustEntry, error) {
		if from != "cc:*" || cur.Level != 3 || cur.Perms["bash"] != "deny" {
			t.Errorf("applying row %+v from %q", cur, from)
		}
		cur.Perms["gh__*"] = chain.PermBind
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e, ok, err := db.Lookup("cc:ws")
	if err != nil || !ok || e.Entity != "cc:ws" || e.Level != 3 || e.Perms["bash"] != "deny" || e.Perms["gh__*"] != chain.PermBind {
		t.Fatalf("Lookup = %+v %v %v", e, ok, err)
	}
	if got := parsePerms(`{"a":"BIND","b":"grant","c":"allow"}`); got["a"] != chain.PermBind || got["b"] != chain.PermDeny || got["c"] != chain.PermAllow {
		t.Errorf("parsePerms: %v", got)
	}
	// An invalid row is not written.
	err = db.UpdateTrust(ctx, "cc:ws", func(cur chain.TrustEntry, _ string) (chain.TrustEntry, error) {
		cur.Perms["no*"] = chain.PermBind
		return cur, nil
	})
	if err == nil {
		t.Error("a row with an invalid pattern was written")
	}
	if e, _, _ := db.Lookup("cc:ws"); len(e.Perms) != 2 {
		t.Errorf("after the refused update: %+v", e)
	}
}
