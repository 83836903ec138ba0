package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/token"
)

// TestCredentialChecks: a credential is accepted only with its own secret,
// for its own workspace, until it is revoked; a revocation by another
// process (another DB handle) is seen within FreshFor.
func TestCredentialChecks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	daemon := openTest(t, path)
	cli := openTest(t, path)
	ctx := context.Background()
	id, digest, text := token.NewClientCredential()
	if err := cli.AddCredential(ctx, Credential{ID: id, WorkspaceID: "ws-1", Kind: "cc", Label: "laptop"}, digest); err != nil {
		t.Fatal(err)
	}
	pid, secret, ok := token.ParseClientCredential(text)
	if !ok || pid != id {
		t.Fatalf("ParseClientCredential(%q) = %q, %v", text, pid, ok)
	}
	_, other, _ := token.NewClientCredential()
	tests := []struct {
		name, ws, id, digest, kind, reason string
	}{
		{"valid", "ws-1", id, token.SecretDigest(secret), "cc", ""},
		{"wrong secret", "ws-1", id, other, "", "unknown_credential"},
		{"unknown id", "ws-1", "0123456789abcdef", token.SecretDigest(secret), "", "unknown_credential"},
		{"other workspace", "ws-2", id, token.SecretDigest(secret), "cc", "credential_for_another_workspace"},
	}
	for _, tt := range tests {
		kind, reason, err := daemon.CheckCredential(tt.ws, tt.id, tt.digest)
		if err != nil || kind != tt.kind || reason != tt.reason {
			t.Errorf("%s: CheckCredential = %q, %q, %v; want %q, %q", tt.name, kind, reason, err, tt.kind, tt.reason)
		}
	}
	if ok, _ := daemon.CredentialActive(id); !ok {
		t.Fatal("a new credential is not active")
	}
	if _, err := cli.RevokeCredential(ctx, id); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * FreshFor)
	if ok, _ := daemon.CredentialActive(id); ok {
		t.Error("a revoked credential is still active for another handle")
	}
	if kind, reason, _ := daemon.CheckCredential("ws-1", id, token.SecretDigest(secret)); reason != "credential_revoked" || kind != "cc" {
		t.Errorf("revoked: kind %q, reason %q; want cc, credential_revoked", kind, reason)
	}
	if _, err := cli.RevokeCredential(ctx, "ffffffffffffffff"); err != ErrNoCredential {
		t.Errorf("revoking an unknown id: %v", err)
	}
	list, err := cli.Credentials(ctx, "ws-1")
	if err != nil || len(list) != 1 || list[0].RevokedAt == nil || list[0].Label != "laptop" {
		t.Errorf("Credentials = %+v, %v", list, err)
	}
	if err := cli.AddCredential(ctx, Credential{ID: "abcdefabcdefabcd", WorkspaceID: "ws-1", Kind: "device"}, digest); err == nil {
		t.Error("a device credential was stored; devices prove themselves with their own key")
	}
}

// TestParseClientCredential refuses anything not of the exact form.
func TestParseClientCredential(t *testing.T) {
	_, _, good := token.NewClientCredential()
	if _, _, ok := token.ParseClientCredential(good); !ok {
		t.Fatalf("a fresh credential does not parse: %q", good)
	}
	for _, bad := range []string{"", "cdc1_", good + "0", good[:len(good)-1], "cdc2" + good[4:],
		"cdc1_0123456789ABCDEF_" + good[22:], good[:21] + "-" + good[22:]} {
		if _, _, ok := token.ParseClientCredential(bad); ok {
			t.Errorf("ParseClientCredential(%q) accepted", bad)
		}
	}
}

// TestCredentialLabelIsPlainText: a label is shown in 'clawd token list'
// on a terminal; control characters (escape sequences) and invalid UTF-8
// are refused when it is stored.
func TestCredentialLabelIsPlainText(t *testing.T) {
	db := openTest(t, filepath.Join(t.TempDir(), "clawd.db"))
	for _, label := range []string{"a\x1b[2Jb", "bell\x07", "new\nline", "bad \xff utf8"} {
		id, digest, _ := token.NewClientCredential()
		if err := db.AddCredential(context.Background(), Credential{ID: id, WorkspaceID: "ws-1", Kind: "cc", Label: label}, digest); err == nil {
			t.Errorf("label %q stored", label)
		}
	}
	id, digest, _ := token.NewClientCredential()
	if err := db.AddCredential(context.Background(), Credential{ID: id, WorkspaceID: "ws-1", Kind: "cc", Label: "Jane's laptop – ü"}, digest); err != nil {
		t.Fatal(err)
	}
}
