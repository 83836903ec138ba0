// Package token issues and checks the workspace bearer tokens of the
// loopback HTTP transport (docs/transports.md).
//
// A token is HMAC-SHA256 over the workspace id, the daemon's pid, its start
// time and a rotation counter, keyed by a per-user secret. The daemon keeps
// the current token in memory, writes it to the token file (0600, atomically)
// for same-user clients to read, renews it before its 24 h TTL runs out and
// replaces it at once on `clawd token rotate`. The secret itself never leaves
// this package: it is not logged, not written to the token file and removed
// from the process environment, so no child process (bash) inherits it.
package token

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// EnvSecret is the environment variable that may carry the HMAC key.
const EnvSecret = "CLAWDE_SESSION_SECRET"

// minEnvSecret is the shortest secret accepted from EnvSecret: a shorter one
// is more likely a placeholder than a key.
const minEnvSecret = 16

// secretBytes is the size of a generated secret.
const secretBytes = 32

// TakeEnvSecret reads EnvSecret and removes it from the process environment,
// so tools that start processes (bash) cannot pass it on. It must run before
// any child process is started. ok reports whether the variable was set.
func TakeEnvSecret() (secret []byte, ok bool) {
	v, ok := os.LookupEnv(EnvSecret)
	os.Unsetenv(EnvSecret)
	if !ok {
		return nil, false
	}
	return []byte(v), true
}

// CheckEnvSecret validates a secret taken from EnvSecret.
func CheckEnvSecret(secret []byte) error {
	if len(secret) < minEnvSecret {
		return fmt.Errorf("%s is set but shorter than %d bytes; set it to a long random value (e.g. `openssl rand -hex 32`) or unset it to let clawd generate one", EnvSecret, minEnvSecret)
	}
	return nil
}

// LoadOrCreateSecret returns the secret stored at path (hex text, mode 0600),
// creating it with 32 random bytes when absent. A file that is not a regular
// file, is readable by group or others, or does not hold a 32-byte hex key is
// refused with an error saying how to fix it: a key others could read would
// let them forge tokens.
func LoadOrCreateSecret(path string) ([]byte, error) {
	for attempt := 0; attempt < 2; attempt++ {
		key, err := readSecret(path)
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err := createSecret(path); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("creating the session secret %s: %w", path, err)
		}
		// Created by us or, concurrently, by another daemon: read it back.
	}
	return nil, fmt.Errorf("session secret %s: could not be created", path)
}

// CheckPrivate refuses a key file that another account could read or
// replace: on unix by its mode bits and owner uid, on Windows by its owner
// and access list (clawd's own files get an access list for the current
// user only, fileutil.MakePrivate, which passes). fi is path's Lstat or
// the open file's Stat.
func CheckPrivate(path string, fi fs.FileInfo) error { return checkPrivate(path, fi) }

func readSecret(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("session secret %s is not a regular file (%s); remove it and clawd will create a new one", path, fi.Mode().Type())
	}
	if err := checkPrivate(path, fi); err != nil {
		return nil, fmt.Errorf("session secret %s: %w", path, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != secretBytes {
		return nil, fmt.Errorf("session secret %s does not hold a %d-byte hex key; remove it and clawd will create a new one", path, secretBytes)
	}
	return key, nil
}

// createSecret writes a new secret so that it appears complete or not at
// all, and never replaces an existing one (a concurrent daemon may have just
// created it): a temp file is linked into place, which fails if path exists.
func createSecret(path string) error {
	dir := filepath.Dir(path)
	if err := fileutil.MkdirPrivate(dir); err != nil {
		return err
	}
	key := make([]byte, secretBytes)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".session.secret.tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := fileutil.MakePrivate(tmp, false); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Link(tmp, path)
}
