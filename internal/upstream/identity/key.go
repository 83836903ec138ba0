package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// KeyPath is where a workspace's signing key lives: one Ed25519 key per
// workspace in clawd's data directory, so the issuer (Issuer) and the key
// change together and two projects never share a key.
func KeyPath(dataDir, workspaceID string) string {
	return filepath.Join(dataDir, "identity-"+workspaceID+".key")
}

// Issuer is the iss of a workspace's tokens.
func Issuer(workspaceID string) string { return "urn:clawd:workspace:" + workspaceID }

// Key is a workspace's signing key. It never leaves clawd: only Public,
// PublicPEM and JWKS are shown, and Key has no method that prints the
// private half (fmt and slog see the key id only).
type Key struct {
	priv ed25519.PrivateKey
	// KID is the RFC 7638 JWK thumbprint of the public key (base64url of
	// its SHA-256): the JWT header's kid and the JWKS entry's.
	KID string
}

// String and LogValue-free formatting: a Key prints as its kid.
func (k *Key) String() string { return "identity key " + k.KID }

// GoString keeps %#v from printing the private bytes.
func (k *Key) GoString() string { return k.String() }

// Public is the verifying key.
func (k *Key) Public() ed25519.PublicKey { return k.priv.Public().(ed25519.PublicKey) }

// KeyError says why the key cannot be used and how to fix it.
type KeyError struct {
	Path string
	// Problem is one of missing, unreadable, not_regular, mode, owner, corrupt.
	Problem string
	Detail  string
}

func (e *KeyError) Error() string {
	fix := ""
	switch e.Problem {
	case "missing":
		fix = "create it with `clawd mcp identity-key` run in that workspace (or with --workspace DIR) and give its public key to the servers that verify tokens"
	case "mode":
		fix = "it must be readable by you alone: chmod 600 " + e.Path + " (then check nobody copied it, or replace it)"
	case "owner":
		fix = "it must belong to the user clawd runs as; replace it (move it away, then `clawd mcp identity-key`)"
	default:
		fix = "move it away and create a new one with `clawd mcp identity-key` (servers then need the new public key)"
	}
	return fmt.Sprintf("clawd's identity signing key %s is %s (%s); %s", e.Path, problemText(e.Problem), e.Detail, fix)
}

func problemText(p string) string {
	switch p {
	case "missing":
		return "missing"
	case "unreadable":
		return "unreadable"
	case "not_regular":
		return "not a regular file"
	case "mode":
		return "readable by others"
	case "owner":
		return "owned by another user"
	}
	return "corrupt"
}

// maxKeyFile bounds what LoadKey reads.
const maxKeyFile = 16 << 10

// LoadKey reads the key at path, refusing one that is missing, not a
// regular file (a symlink included), readable or writable by group or
// others, owned by another user (Unix), or not a PKCS#8 Ed25519 key. It
// never creates a key: a key that vanished is an error, not a new key the
// servers do not know.
func LoadKey(path string) (*Key, error) {
	return loadKey(path, nil)
}

// keyVersion identifies one version of the key file (device, inode, size,
// modification and change times where the platform has them): a cached
// key is reused only for the same version, after the file's checks passed
// again.
type keyVersion struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

type cachedKey struct {
	path string
	ver  keyVersion
	key  *Key
}

// loadKey is LoadKey; with cache, the parsed key of the same file version
// is reused instead of read and parsed again. The file is opened and its
// type, mode and owner checked on every call either way.
func loadKey(path string, cache *atomic.Pointer[cachedKey]) (*Key, error) {
	f, err := openNoFollow(path)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &KeyError{Path: path, Problem: "missing", Detail: "no such file"}
		case isSymlinkErr(err):
			return nil, &KeyError{Path: path, Problem: "not_regular", Detail: "it is a symbolic link"}
		}
		return nil, &KeyError{Path: path, Problem: "unreadable", Detail: err.Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &KeyError{Path: path, Problem: "unreadable", Detail: err.Error()}
	}
	if !fi.Mode().IsRegular() {
		return nil, &KeyError{Path: path, Problem: "not_regular", Detail: "mode " + fi.Mode().String()}
	}
	if modeChecked && fi.Mode().Perm()&0o077 != 0 {
		return nil, &KeyError{Path: path, Problem: "mode", Detail: fmt.Sprintf("mode %04o, want 0600", fi.Mode().Perm())}
	}
	if err := checkOwner(path, fi); err != nil {
		return nil, &KeyError{Path: path, Problem: "owner", Detail: err.Error()}
	}
	ver := versionOf(fi)
	if cache != nil {
		if c := cache.Load(); c != nil && c.path == path && c.ver == ver {
			return c.key, nil
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, &KeyError{Path: path, Problem: "unreadable", Detail: err.Error()}
	}
	if len(b) > maxKeyFile {
		return nil, &KeyError{Path: path, Problem: "corrupt", Detail: "larger than a key file can be"}
	}
	k, err := parseKey(path, b)
	if err == nil && cache != nil {
		cache.Store(&cachedKey{path: path, ver: ver, key: k})
	}
	return k, err
}

func parseKey(path string, b []byte) (*Key, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, &KeyError{Path: path, Problem: "corrupt", Detail: "not a PEM \"PRIVATE KEY\" block"}
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, &KeyError{Path: path, Problem: "corrupt", Detail: "not a PKCS#8 key"}
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, &KeyError{Path: path, Problem: "corrupt", Detail: fmt.Sprintf("a %T, not an Ed25519 key", k)}
	}
	return newKey(priv), nil
}

func newKey(priv ed25519.PrivateKey) *Key {
	k := &Key{priv: priv}
	k.KID = thumbprint(k.Public())
	return k
}

// EnsureKey loads the key at path, creating it first if there is none.
// Creation is atomic and exclusive: the key is written to a private temp
// file and linked into place only if no key exists, so two processes
// creating it at once end up with the same key (the loser loads the
// winner's). A key that exists but cannot be used is an error, never
// replaced.
func EnsureKey(path string) (k *Key, created bool, err error) {
	k, err = LoadKey(path)
	var ke *KeyError
	if err == nil || !errors.As(err, &ke) || ke.Problem != "missing" {
		return k, false, err
	}
	if err := fileutil.MkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, false, fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, false, err
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	tmp, err := writeTemp(filepath.Dir(path), data)
	if err != nil {
		return nil, false, fmt.Errorf("writing the identity key: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			k, err = LoadKey(path)
			return k, false, err
		}
		return nil, false, fmt.Errorf("installing the identity key at %s: %w", path, err)
	}
	k, err = LoadKey(path)
	return k, err == nil, err
}

// thumbprint is RFC 7638's: SHA-256 over the required members of the JWK
// in lexical order, base64url without padding.
func thumbprint(pub ed25519.PublicKey) string {
	canon := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(canon))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// PublicPEM is the public key as a PEM "PUBLIC KEY" (PKIX) block, what
// most JWT libraries take.
func (k *Key) PublicPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil { // cannot happen for an Ed25519 key
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// JWK is one public key as a JSON Web Key (RFC 8037).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// JWKS is the public key as a JWK Set document.
func (k *Key) JWKS() []byte {
	doc := struct {
		Keys []JWK `json:"keys"`
	}{[]JWK{{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.Public()), Kid: k.KID, Alg: "EdDSA", Use: "sig"}}}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return append(b, '\n')
}

// writeTemp writes data to a new private (0600) file in dir, synced, and
// returns its name.
func writeTemp(dir string, data []byte) (name string, err error) {
	f, err := os.CreateTemp(dir, ".identity-*.tmp")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return "", err
	}
	if err = fileutil.MakePrivate(f.Name(), false); err != nil {
		return "", err
	}
	if _, err = f.Write(data); err != nil {
		return "", err
	}
	if err = f.Sync(); err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}
