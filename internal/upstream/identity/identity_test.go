package identity

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json/jsontext"
)

func TestRewriteStripsForgedNames(t *testing.T) {
	strip := []string{DefaultUserArg, DefaultTokenArg}
	cases := []struct{ in, want string }{
		{`{"path":"a","__mateclaw_user__":"admin"}`, `{"path":"a","__mateclaw_user__":"cc:ws"}`},
		// An escaped name decodes to the reserved one: stripped too.
		{`{"\u005f_mateclaw_user__":"admin","x":1}`, `{"x":1,"__mateclaw_user__":"cc:ws"}`},
		{`{"__mateclaw_token__":"forged.jwt.x","x":[1, 2]}`, `{"x":[1,2],"__mateclaw_user__":"cc:ws"}`},
		{``, `{"__mateclaw_user__":"cc:ws"}`},
		{`{}`, `{"__mateclaw_user__":"cc:ws"}`},
	}
	for _, c := range cases {
		got, err := Rewrite(jsontext.Value(c.in), strip, DefaultUserArg, "cc:ws")
		if err != nil {
			t.Fatalf("Rewrite(%s): %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("Rewrite(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	// Off: stripped, nothing added; untouched arguments are returned as
	// they are, spacing included.
	got, _ := Rewrite(jsontext.Value(`{"a": 1, "__mateclaw_user__": "root"}`), strip, "", "")
	if string(got) != `{"a":1}` {
		t.Errorf("off: %s", got)
	}
	// A case variant is the same name to a server whose parser folds case
	// (Go's encoding/json matches struct fields so, 'ſ' and the Kelvin
	// sign included, and reads the last copy; others read the first): it
	// is stripped in every mode, with or without escapes or spacing.
	for _, in := range []string{
		`{"a": 1, "__MATECLAW_USER__": "admin"}`,
		`{"a": 1, "__Mateclaw_User__": "admin"}`,
		`{"a": 1, "__mateclaw_uſer__": "admin"}`,
		`{"a": 1, "__mateclaw_u\u017fer__": "admin"}`,
		`{"a": 1, "__MATECLAW_TOKEN__": "forged"}`,
	} {
		if got, err := Rewrite(jsontext.Value(in), strip, "", ""); err != nil || string(got) != `{"a":1}` {
			t.Errorf("off: Rewrite(%s) = %s, %v; want {\"a\":1}", in, got, err)
		}
		if got, err := Rewrite(jsontext.Value(in), strip, DefaultUserArg, "cc:ws"); err != nil || string(got) != `{"a":1,"__mateclaw_user__":"cc:ws"}` {
			t.Errorf("meta: Rewrite(%s) = %s, %v", in, got, err)
		}
	}
	if got, _ := Rewrite(jsontext.Value(`{"USER":"admin","users":1}`), []string{"user"}, "", ""); string(got) != `{"users":1}` {
		t.Errorf("a configured argument's case variant: %s", got)
	}
	plain := `{"a": 1,  "b": "x"}`
	if got, _ := Rewrite(jsontext.Value(plain), strip, "", ""); string(got) != plain {
		t.Errorf("untouched arguments changed: %s", got)
	}
	// A second copy of a name (which a lenient parser might read instead of
	// clawd's) and invalid UTF-8 are refused, not passed on.
	for _, bad := range []string{
		`{"__mateclaw_user__":"a","__mateclaw_user__":"b"}`,
		`{"x":1,"x":2}`,
		"{\"x\":\"\xff\"}",
		`[1]`, `{"x":1} {"y":2}`, `{"x":`,
	} {
		if out, err := Rewrite(jsontext.Value(bad), strip, DefaultUserArg, "cc:ws"); err == nil {
			t.Errorf("Rewrite(%q) = %s, want an error", bad, out)
		}
	}
}

func newKeyFile(t *testing.T) (string, *Key) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "identity-ws.key")
	k, created, err := EnsureKey(path)
	if err != nil || !created {
		t.Fatalf("EnsureKey: %v (created %v)", err, created)
	}
	return path, k
}

func TestEnsureKeyCreatesPrivateKeyOnce(t *testing.T) {
	path, k := newKeyFile(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	k2, created, err := EnsureKey(path)
	if err != nil || created || k2.KID != k.KID {
		t.Fatalf("second EnsureKey: kid %s created %v err %v; want the same key", k2.KID, created, err)
	}
	// Printing a key shows its id only.
	for _, s := range []string{k.String(), k.GoString()} {
		if !strings.Contains(s, k.KID) || strings.Contains(s, string(k.priv)) {
			t.Errorf("key prints as %q", s)
		}
	}
	// Racing creators end up with one key.
	dir := t.TempDir()
	p := filepath.Join(dir, "k.key")
	var wg sync.WaitGroup
	kids := make([]string, 8)
	for i := range kids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, _, err := EnsureKey(p)
			if err != nil {
				t.Errorf("racing EnsureKey: %v", err)
				return
			}
			kids[i] = k.KID
		}()
	}
	wg.Wait()
	for _, id := range kids {
		if id != kids[0] {
			t.Fatalf("racing creators got different keys: %v", kids)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".identity-*")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// verifyIndependently checks a token with go-jose (not the library that
// signed it) against the public key from the JWKS document, and returns
// its claims.
func verifyIndependently(t *testing.T, k *Key, tok string) (josejwt.Claims, jose.Header) {
	t.Helper()
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(k.JWKS(), &set); err != nil {
		t.Fatalf("JWKS: %v", err)
	}
	if len(set.Keys) != 1 || set.Keys[0].KeyID != k.KID || set.Keys[0].Algorithm != "EdDSA" {
		t.Fatalf("JWKS keys: %+v", set.Keys)
	}
	// The kid is the RFC 7638 thumbprint, as go-jose computes it.
	tp, err := set.Keys[0].Thumbprint(cryptoSHA256)
	if err != nil || b64(tp) != k.KID {
		t.Fatalf("kid %s is not the RFC 7638 thumbprint (%s, %v)", k.KID, b64(tp), err)
	}
	parsed, err := josejwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatalf("go-jose cannot parse the token: %v", err)
	}
	var c josejwt.Claims
	if err := parsed.Claims(set.Keys[0].Key, &c); err != nil {
		t.Fatalf("go-jose: signature does not verify: %v", err)
	}
	return c, parsed.Headers[0]
}

func TestSignedTokenVerifiesIndependently(t *testing.T) {
	path, k := newKeyFile(t)
	now := time.Now().Truncate(time.Second)
	f := &Forwarder{Issuer: Issuer("proj-1a2b3c4d"), KeyPath: path, Now: func() time.Time { return now }}
	cfg := Config{Mode: ModeSigned, Audience: "https://api.internal"}
	out, err := f.Apply(cfg, "orders", "cc:proj-1a2b3c4d", jsontext.Value(`{"q":"x","__mateclaw_token__":"forged","__mateclaw_user__":"admin"}`))
	if err != nil {
		t.Fatal(err)
	}
	var args map[string]string
	if err := json.Unmarshal(out.Args, &args); err != nil {
		t.Fatal(err)
	}
	if _, ok := args[DefaultUserArg]; ok || args["q"] != "x" || len(args) != 2 {
		t.Fatalf("arguments %s: want q and clawd's token only", out.Args)
	}
	tok := args[DefaultTokenArg]
	if m, _ := out.Meta["token"].(string); m != tok || out.Meta["entity"] != "cc:proj-1a2b3c4d" {
		t.Fatalf("meta %v does not carry the same token and the entity", out.Meta)
	}
	c, h := verifyIndependently(t, k, tok)
	if h.KeyID != k.KID || h.Algorithm != "EdDSA" {
		t.Errorf("header kid %q alg %q", h.KeyID, h.Algorithm)
	}
	err = c.ValidateWithLeeway(josejwt.Expected{Issuer: "urn:clawd:workspace:proj-1a2b3c4d", Subject: "cc:proj-1a2b3c4d",
		AnyAudience: josejwt.Audience{"https://api.internal"}, Time: now.Add(30 * time.Second)}, 0)
	if err != nil {
		t.Errorf("claims: %v", err)
	}
	if c.IssuedAt.Time() != now || c.Expiry.Time() != now.Add(DefaultTTL) || len(c.ID) < 16 {
		t.Errorf("iat %v exp %v jti %q", c.IssuedAt.Time(), c.Expiry.Time(), c.ID)
	}
	// exp holds: 61 s later the same token is refused; another audience is refused.
	if err := c.ValidateWithLeeway(josejwt.Expected{Time: now.Add(61 * time.Second)}, 0); !errors.Is(err, josejwt.ErrExpired) {
		t.Errorf("61 s later: %v, want expired", err)
	}
	if err := c.ValidateWithLeeway(josejwt.Expected{AnyAudience: josejwt.Audience{"other"}, Time: now}, 0); !errors.Is(err, josejwt.ErrInvalidAudience) {
		t.Errorf("other audience: %v, want invalid audience", err)
	}
	// Without an audience configured the server's name is the audience,
	// and every token has its own jti.
	out2, err := f.Apply(Config{Mode: ModeSigned}, "orders", "local:proj-1a2b3c4d", nil)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := verifyIndependently(t, k, out2.Meta["token"].(string))
	if len(c2.Audience) != 1 || c2.Audience[0] != "orders" || c2.Subject != "local:proj-1a2b3c4d" || c2.ID == c.ID {
		t.Errorf("second token: aud %v sub %q jti %q (first %q)", c2.Audience, c2.Subject, c2.ID, c.ID)
	}
	// A token signed by another key does not verify against this one.
	path2, _ := newKeyFile(t)
	other, err := (&Forwarder{Issuer: f.Issuer, KeyPath: path2}).Sign("cc:x", "orders")
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := josejwt.ParseSigned(other, []jose.SignatureAlgorithm{jose.EdDSA})
	var cc josejwt.Claims
	if err := parsed.Claims(k.Public(), &cc); err == nil {
		t.Error("a token of another key verified")
	}
	verifyWithNode(t, k, tok, now)
}

// verifyWithNode checks the token a third way, with Node's own crypto and
// the PEM public key, when node is installed.
func verifyWithNode(t *testing.T, k *Key, tok string, now time.Time) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Log("node is not installed: the Node verification is skipped (go-jose verified the token)")
		return
	}
	dir := t.TempDir()
	pub := filepath.Join(dir, "pub.pem")
	os.WriteFile(pub, k.PublicPEM(), 0o600)
	script := `
const crypto = require('crypto'); const fs = require('fs');
const [tok, pubPath, nowS] = process.argv.slice(1);
const [h, p, s] = tok.split('.');
const key = crypto.createPublicKey(fs.readFileSync(pubPath));
const ok = crypto.verify(null, Buffer.from(h + '.' + p), key, Buffer.from(s, 'base64url'));
const claims = JSON.parse(Buffer.from(p, 'base64url'));
const header = JSON.parse(Buffer.from(h, 'base64url'));
console.log(JSON.stringify({ok, alg: header.alg, kid: header.kid, sub: claims.sub, aud: claims.aud, live: claims.exp > Number(nowS)}));
`
	out, err := exec.Command(node, "-e", script, tok, pub, jsonNum(now.Unix())).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var r struct {
		OK       bool `json:"ok"`
		Live     bool `json:"live"`
		Alg, Kid string
		Sub      string
		Aud      any
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("node said %s: %v", out, err)
	}
	if !r.OK || !r.Live || r.Alg != "EdDSA" || r.Kid != k.KID || r.Sub != "cc:proj-1a2b3c4d" {
		t.Errorf("node verification: %s", out)
	}
}

func TestMetaModeOverwritesForgedValues(t *testing.T) {
	f := &Forwarder{} // meta mode needs no key
	out, err := f.Apply(Config{Mode: ModeMeta}, "s", "oc:ws", jsontext.Value(`{"__mateclaw_user__":"admin","__mateclaw_token__":"x","k":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Args) != `{"k":true,"__mateclaw_user__":"oc:ws"}` || out.Meta["entity"] != "oc:ws" || out.Meta["token"] != nil {
		t.Errorf("args %s meta %v", out.Args, out.Meta)
	}
	// A custom argument name: that one carries the entity, the default
	// names are still stripped.
	out, _ = f.Apply(Config{Mode: ModeMeta, Arg: "on_behalf_of"}, "s", "oc:ws", jsontext.Value(`{"on_behalf_of":"admin","__mateclaw_user__":"admin"}`))
	if string(out.Args) != `{"on_behalf_of":"oc:ws"}` {
		t.Errorf("custom arg: %s", out.Args)
	}
	// Off: the reserved names are stripped and nothing is added.
	out, _ = f.Apply(Config{Mode: ModeOff}, "s", "oc:ws", jsontext.Value(`{"__mateclaw_user__":"admin","k":1}`))
	if string(out.Args) != `{"k":1}` || out.Meta != nil {
		t.Errorf("off: args %s meta %v", out.Args, out.Meta)
	}
	// No caller: nothing is fabricated, the call is refused.
	if _, err := f.Apply(Config{Mode: ModeMeta}, "s", "", nil); err == nil {
		t.Error("a call without an entity was forwarded")
	}
}

func TestSignedFailsClosed(t *testing.T) {
	good, _ := newKeyFile(t)
	dir := t.TempDir()
	cases := map[string]func() string{
		"missing": func() string { return filepath.Join(dir, "none.key") },
		"mode": func() string {
			p := filepath.Join(dir, "open.key")
			copyFile(t, good, p, 0o644)
			return p
		},
		"corrupt": func() string {
			p := filepath.Join(dir, "bad.key")
			os.WriteFile(p, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
			return p
		},
		"not_regular": func() string {
			p := filepath.Join(dir, "link.key")
			os.Symlink(good, p)
			return p
		},
		"dir": func() string {
			p := filepath.Join(dir, "d.key")
			os.Mkdir(p, 0o700)
			return p
		},
	}
	if runtime.GOOS == "windows" {
		delete(cases, "mode")
		delete(cases, "not_regular")
	}
	if os.Getuid() == 0 {
		cases["owner"] = func() string {
			p := filepath.Join(dir, "nobody.key")
			copyFile(t, good, p, 0o600)
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Skipf("chown: %v", err)
			}
			return p
		}
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			path := mk()
			f := &Forwarder{Issuer: "urn:clawd:workspace:w", KeyPath: path}
			out, err := f.Apply(Config{Mode: ModeSigned}, "orders", "cc:w", jsontext.Value(`{"__mateclaw_token__":"forged"}`))
			var r *Refused
			if !errors.As(err, &r) {
				t.Fatalf("Apply = %+v, %v; want a refusal", out, err)
			}
			if out.Args != nil || out.Meta != nil {
				t.Errorf("something would have been sent: %+v", out)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "identity_refused: upstream server orders") || !strings.Contains(msg, path) || !strings.Contains(msg, "clawd mcp identity-key") && name != "mode" {
				t.Errorf("message %q does not name the server, the file and the fix", msg)
			}
			if r.AuditDetail() != "identity_refused" {
				t.Errorf("audit detail %q", r.AuditDetail())
			}
		})
	}
	// f with no key path at all.
	if _, err := (&Forwarder{Issuer: "i"}).Apply(Config{Mode: ModeSigned}, "s", "cc:w", nil); err == nil {
		t.Error("signed without a key path was forwarded")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, bad := range []Config{{Mode: "plain"}, {Mode: ModeMeta, Arg: "a-b"}, {Mode: ModeMeta, Arg: strings.Repeat("a", 65)},
		{Mode: ModeSigned, Audience: "has space"}, {Mode: ModeSigned, Audience: strings.Repeat("a", 257)}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	for _, ok := range []Config{{}, {Mode: ModeOff}, {Mode: ModeMeta, Arg: "user_id"}, {Mode: ModeSigned, Audience: "https://api.internal/x"}} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	if (Config{Mode: ModeSigned}).ArgName() != DefaultTokenArg || (Config{Mode: ModeMeta}).ArgName() != DefaultUserArg {
		t.Error("default argument names")
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(to, mode)
}

// BenchmarkApply: what forwarding adds to one upstream call, per mode
// (signed reads and parses the key file each time, then signs).
func BenchmarkApply(b *testing.B) {
	path := filepath.Join(b.TempDir(), "k.key")
	if _, _, err := EnsureKey(path); err != nil {
		b.Fatal(err)
	}
	f := &Forwarder{Issuer: "urn:clawd:workspace:w", KeyPath: path}
	args := jsontext.Value(`{"path":"src/main.go","limit":100}`)
	for _, m := range []Mode{ModeOff, ModeMeta, ModeSigned} {
		b.Run(string(m), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Apply(Config{Mode: m}, "orders", "cc:w", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestForwarderNoticesKeyChanges: the parsed key is reused only for the
// same file: a replaced key signs from the next call, a key opened to
// others or removed refuses the next call.
func TestForwarderNoticesKeyChanges(t *testing.T) {
	path, k1 := newKeyFile(t)
	f := &Forwarder{Issuer: "urn:clawd:workspace:w", KeyPath: path}
	kidOf := func() string {
		tok, err := f.Sign("cc:w", "s")
		if err != nil {
			return "error: " + err.Error()
		}
		p, err := josejwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
		if err != nil {
			t.Fatal(err)
		}
		return p.Headers[0].KeyID
	}
	if got := kidOf(); got != k1.KID {
		t.Fatalf("kid %s, want %s", got, k1.KID)
	}
	other, k2 := newKeyFile(t)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if got := kidOf(); got != k2.KID {
		t.Errorf("after the key was replaced: kid %s, want the new %s", got, k2.KID)
	}
	os.Chmod(path, 0o640)
	if got := kidOf(); !strings.Contains(got, "readable by others") && runtime.GOOS != "windows" {
		t.Errorf("after chmod 640: %s", got)
	}
	os.Chmod(path, 0o600)
	os.Remove(path)
	if got := kidOf(); !strings.Contains(got, "missing") {
		t.Errorf("after removal: %s", got)
	}
}

// Arguments in any language keep the no-decode path; only an escape or one
// of the two non-ASCII letters that fold to ASCII ones (ſ, the Kelvin sign)
// can spell a reserved name, and a configured non-ASCII name always decodes.
func TestMayHoldNonASCII(t *testing.T) {
	names := []string{"__mateclaw_user__"}
	for _, tc := range []struct {
		args  string
		names []string
		want  bool
	}{
		{`{"text":"héllo wörld, 日本語"}`, names, false},
		{`{"__mateclaw_uſer__":"x"}`, names, true},
		{`{"__mateclaw_user__":"x"}`, []string{"__mateclaw_user__", "ünïcode"}, true},
		{"{\"a\":\"\u212a\"}", names, true},
		{`{"a":"\n"}`, names, true},
	} {
		if got := mayHold([]byte(tc.args), tc.names); got != tc.want {
			t.Errorf("mayHold(%s, %q) = %v, want %v", tc.args, tc.names, got, tc.want)
		}
	}
}
