package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestMCPIdentityCLI: `mcp add --identity signed` creates the workspace's
// signing key (0600) once, `mcp identity-key` prints its public half as
// PEM and as JWKS (never the private half), `mcp set` changes the mode,
// bad values are usage errors, and a key opened to others is refused.
func TestMCPIdentityCLI(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	out, errs, code := e.Run("mcp", "add", "orders", "--stdio", "--identity", "signed", "--identity-audience", "https://orders.internal", "--json", "--", "true")
	if code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	row := mustJSON[map[string]any](t, out)
	if row["identity_mode"] != "signed" || row["identity_audience"] != "https://orders.internal" || row["identity_arg"] != "" {
		t.Errorf("stored %v", row)
	}
	keyPath := filepath.Join(e.DataDir(), "identity-"+e.WorkspaceID()+".key")
	fi, err := os.Stat(keyPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("signing key %s: %v %v; want a 0600 file", keyPath, fi, err)
	}
	if !strings.Contains(errs, keyPath) || !strings.Contains(errs, "clawd mcp identity-key") {
		t.Errorf("add did not say where the key is and how to get the public key: %q", errs)
	}
	priv, _ := os.ReadFile(keyPath)

	pem := e.MustRun("mcp", "identity-key")
	if !strings.HasPrefix(pem, "-----BEGIN PUBLIC KEY-----\n") {
		t.Errorf("identity-key printed %q, want a PEM public key", pem)
	}
	var jwks struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal([]byte(e.MustRun("mcp", "identity-key", "--jwks")), &jwks); err != nil || len(jwks.Keys) != 1 ||
		jwks.Keys[0]["kty"] != "OKP" || jwks.Keys[0]["crv"] != "Ed25519" || jwks.Keys[0]["alg"] != "EdDSA" || jwks.Keys[0]["kid"] == "" {
		t.Errorf("identity-key --jwks: %v %+v", err, jwks)
	}
	if _, ok := jwks.Keys[0]["d"]; ok {
		t.Error("the JWKS carries the private key")
	}
	js := e.MustRun("mcp", "identity-key", "--json")
	for _, leak := range []string{string(priv), "PRIVATE"} {
		if strings.Contains(pem+js, leak) {
			t.Errorf("identity-key output carries the private key")
		}
	}
	if again, _ := os.ReadFile(keyPath); string(again) != string(priv) {
		t.Error("printing the key replaced it")
	}

	out = e.MustRun("mcp", "set", "orders", "--identity", "meta", "--identity-audience", "", "--identity-arg", "on_behalf_of")
	if !strings.Contains(out, "meta") || !strings.Contains(out, "on_behalf_of") {
		t.Errorf("set: %q", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "set", "orders"}, "needs at least one of --identity"},
		{[]string{"mcp", "set", "orders", "--identity", "plain"}, `identity mode "plain": use off`},
		{[]string{"mcp", "set", "orders", "--identity-arg", "a-b"}, "--identity-arg"},
		{[]string{"mcp", "set", "orders", "--identity-audience", "x"}, "add --identity signed"},
		{[]string{"mcp", "set", "nosuch", "--identity", "meta"}, "nosuch"},
		{[]string{"mcp", "add", "o2", "--stdio", "--identity-audience", "x", "--", "true"}, "add --identity signed"},
	} {
		_, errs, code := e.Run(c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("clawd %q: exit %d, stderr %q; want an error with %q", c.args, code, errs, c.want)
		}
	}
	os.Chmod(keyPath, 0o644)
	if _, errs, code := e.Run("mcp", "identity-key"); code != 1 || !strings.Contains(errs, "chmod 600") {
		t.Errorf("a key readable by others: exit %d %q; want exit 1 naming chmod 600", code, errs)
	}
}
