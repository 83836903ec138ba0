package token

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable wall clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestIssuer(t *testing.T, clock *fakeClock) *Issuer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hooks", ".clawde-token-ws-12345678")
	i, err := NewIssuer(Options{
		Secret:      bytes.Repeat([]byte{7}, 32),
		WorkspaceID: "ws-12345678",
		PID:         4242,
		Boot:        time.Unix(1_700_000_000, 0),
		Path:        path,
		Now:         clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func readTok(t *testing.T, i *Issuer) string {
	t.Helper()
	tok, err := ReadFile(i.Path())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestIssuerWritesPrivateTokenFile(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	i := newTestIssuer(t, clock)
	fi, err := os.Stat(i.Path())
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("token file mode = %04o, want 0600", perm)
	}
	dir, err := os.Stat(filepath.Dir(i.Path()))
	if err != nil {
		t.Fatal(err)
	}
	if perm := dir.Mode().Perm(); perm != 0o700 {
		t.Errorf("token directory mode = %04o, want 0700", perm)
	}
	tok := readTok(t, i)
	if b, err := hex.DecodeString(tok); err != nil || len(b) != 32 {
		t.Errorf("token %q is not 32 bytes of hex", tok)
	}
	if !i.Check(tok) {
		t.Error("Check(token from file) = false")
	}
	for _, bad := range []string{"", tok[:63], tok + "0", strings.ToUpper(tok), " " + tok} {
		if i.Check(bad) {
			t.Errorf("Check(%q) = true, want false", bad)
		}
	}
	// No temp files are left next to the token file.
	ents, _ := os.ReadDir(filepath.Dir(i.Path()))
	if len(ents) != 1 {
		t.Errorf("token directory holds %d entries, want only the token file", len(ents))
	}
}

func TestTokenDependsOnEveryInput(t *testing.T) {
	base := Options{Secret: []byte("0123456789abcdef0123456789abcdef"), WorkspaceID: "ws-1", PID: 10, Boot: time.Unix(100, 0)}
	ref := (&Issuer{opts: base}).compute(1)
	variants := map[string]func(o *Options, c *uint64){
		"secret":    func(o *Options, c *uint64) { o.Secret = []byte("0123456789abcdef0123456789abcdeX") },
		"workspace": func(o *Options, c *uint64) { o.WorkspaceID = "ws-2" },
		"pid":       func(o *Options, c *uint64) { o.PID = 11 },
		"boot":      func(o *Options, c *uint64) { o.Boot = time.Unix(100, 1) },
		"counter":   func(o *Options, c *uint64) { *c = 2 },
	}
	for name, change := range variants {
		o, c := base, uint64(1)
		change(&o, &c)
		if got := (&Issuer{opts: o}).compute(c); bytes.Equal(got, ref) {
			t.Errorf("changing the %s left the token unchanged", name)
		}
	}
	if again := (&Issuer{opts: base}).compute(1); !bytes.Equal(again, ref) {
		t.Error("the same inputs gave a different token")
	}
}

func TestRotateRejectsOldTokenAtOnce(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	i := newTestIssuer(t, clock)
	old := readTok(t, i)
	if err := i.Rotate(); err != nil {
		t.Fatal(err)
	}
	cur := readTok(t, i)
	if cur == old {
		t.Fatal("rotation wrote the same token")
	}
	if i.Check(old) {
		t.Error("the token from before the rotation is still accepted")
	}
	if !i.Check(cur) {
		t.Error("the rotated token is not accepted")
	}
	// A rotation right after a renewal also drops the renewed-away token.
	clock.Add(DefaultTTL - DefaultRenewBefore)
	i.RenewIfDue()
	renewedAway := cur
	cur = readTok(t, i)
	if !i.Check(renewedAway) || !i.Check(cur) {
		t.Fatal("after a renewal both the previous and the new token must be accepted")
	}
	if err := i.Rotate(); err != nil {
		t.Fatal(err)
	}
	if i.Check(renewedAway) || i.Check(cur) {
		t.Error("a rotation must reject every earlier token")
	}
	if !i.Check(readTok(t, i)) {
		t.Error("the token after the second rotation is not accepted")
	}
}

func TestRenewalAndExpiry(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	i := newTestIssuer(t, clock)
	first := readTok(t, i)
	if got, want := i.Expires(), clock.Now().Add(24*time.Hour); !got.Equal(want) {
		t.Errorf("Expires = %v, want %v (24 h TTL)", got, want)
	}

	// Just before the renewal time nothing changes.
	clock.Add(DefaultTTL - DefaultRenewBefore - time.Second)
	if !i.Check(first) {
		t.Fatal("the token was rejected before its renewal time")
	}
	if readTok(t, i) != first {
		t.Fatal("the token was renewed early")
	}

	// At the renewal time the next Check renews; both tokens are accepted.
	clock.Add(time.Second)
	if !i.Check(first) {
		t.Fatal("the previous token must stay valid until it expires")
	}
	second := readTok(t, i)
	if second == first {
		t.Fatal("no renewal at the renewal time")
	}
	if !i.Check(second) {
		t.Fatal("the renewed token is not accepted")
	}

	// When the first token's 24 h are up it is rejected; the second lives on.
	clock.Add(DefaultRenewBefore)
	if i.Check(first) {
		t.Error("the first token is accepted after its 24 h TTL")
	}
	if !i.Check(second) {
		t.Error("the renewed token was rejected before its own expiry")
	}
}

func TestExpiredAfterSleepIsRenewedOnCheck(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	i := newTestIssuer(t, clock)
	first := readTok(t, i)
	// The machine slept through the whole TTL: no timer ran.
	clock.Add(30 * time.Hour)
	if i.Check(first) {
		t.Fatal("a token past its TTL was accepted")
	}
	second := readTok(t, i)
	if second == first {
		t.Fatal("the check of an expired token did not renew it")
	}
	if !i.Check(second) {
		t.Fatal("the token renewed after the sleep is not accepted")
	}
}

func TestRotateKeepsOldTokenWhenFileCannotBeWritten(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	i := newTestIssuer(t, clock)
	old := readTok(t, i)
	// Make the directory unusable: replace it by a file.
	dir := filepath.Dir(i.Path())
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := i.Rotate(); err == nil {
		t.Fatal("Rotate succeeded although the token file cannot be written")
	}
	if !i.Check(old) {
		t.Error("a failed rotation must leave the old token valid (clients cannot learn a new one)")
	}
}

func TestRemoveOnlyOwnToken(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	i := newTestIssuer(t, clock)
	// Another daemon wrote its token meanwhile: keep it.
	if err := os.WriteFile(i.Path(), []byte("someone-else"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := i.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(i.Path()); err != nil {
		t.Fatalf("Remove deleted another daemon's token file: %v", err)
	}
	if err := i.Rotate(); err != nil {
		t.Fatal(err)
	}
	if err := i.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(i.Path()); !os.IsNotExist(err) {
		t.Fatalf("Remove left this daemon's token file: %v", err)
	}
}

func TestLoadOrCreateSecret(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "clawde")
	path := filepath.Join(dir, "session.secret")
	k1, err := LoadOrCreateSecret(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != 32 {
		t.Fatalf("generated key has %d bytes, want 32", len(k1))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("secret file mode = %04o, want 0600", perm)
	}
	k2, err := LoadOrCreateSecret(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k1, k2) {
		t.Error("a second load returned another key")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("data directory holds %d entries, want only the secret", len(ents))
	}
}

func TestLoadOrCreateSecretConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.secret")
	const n = 8
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[k], errs[k] = LoadOrCreateSecret(path)
		}()
	}
	wg.Wait()
	for k := range n {
		if errs[k] != nil {
			t.Fatal(errs[k])
		}
		if !bytes.Equal(keys[k], keys[0]) {
			t.Fatal("concurrent first starts ended with different keys")
		}
	}
}

func TestLoadSecretRefusesUnsafeFiles(t *testing.T) {
	good := strings.Repeat("ab", 32) + "\n"
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"group readable", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(good), 0o640)
			os.Chmod(path, 0o640)
		}, "mode 0640"},
		{"symlink", func(t *testing.T, path string) {
			target := path + ".real"
			os.WriteFile(target, []byte(good), 0o600)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"directory", func(t *testing.T, path string) { os.Mkdir(path, 0o700) }, "not a regular file"},
		{"short key", func(t *testing.T, path string) { os.WriteFile(path, []byte("abcd\n"), 0o600) }, "32-byte hex key"},
		{"not hex", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(strings.Repeat("zz", 32)), 0o600)
		}, "32-byte hex key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.secret")
			tt.setup(t, path)
			_, err := LoadOrCreateSecret(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestTakeEnvSecret(t *testing.T) {
	t.Setenv(EnvSecret, "a-long-enough-test-secret-value")
	s, ok := TakeEnvSecret()
	if !ok || string(s) != "a-long-enough-test-secret-value" {
		t.Fatalf("TakeEnvSecret = %q, %v", s, ok)
	}
	if _, still := os.LookupEnv(EnvSecret); still {
		t.Fatal("the secret is still in the environment, where child processes would inherit it")
	}
	if _, ok := TakeEnvSecret(); ok {
		t.Error("a second take found the variable again")
	}
	if err := CheckEnvSecret([]byte("short")); err == nil || !strings.Contains(err.Error(), EnvSecret) {
		t.Errorf("CheckEnvSecret(short) = %v, want an error naming %s", err, EnvSecret)
	}
	if err := CheckEnvSecret([]byte("0123456789abcdef")); err != nil {
		t.Errorf("CheckEnvSecret(16 bytes) = %v", err)
	}
}
