package token

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// A per-client credential (`clawd token issue --client KIND`) binds a
// connection to one entity kind, so that kind no longer depends on what the
// client says about itself (docs/security.md). Its text is
//
//	cdc1_<id: 16 hex digits>_<secret: 64 hex digits>
//
// The id is public (listed by `clawd token list`, written to audit rows);
// the secret is 256 random bits of which clawd stores only the SHA-256. A
// fast hash is enough: the secret is random, not a password, so there is
// nothing to guess from its digest.
const credentialPrefix = "cdc1_"

const (
	credentialIDBytes     = 8
	credentialSecretBytes = 32
)

// NewClientCredential returns a fresh credential: its id, the digest of its
// secret (what the store keeps) and its full text (shown once, given to the
// client).
func NewClientCredential() (id, digest, text string) {
	var b [credentialIDBytes + credentialSecretBytes]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	id = hex.EncodeToString(b[:credentialIDBytes])
	secret := hex.EncodeToString(b[credentialIDBytes:])
	return id, SecretDigest(secret), credentialPrefix + id + "_" + secret
}

// IsClientCredential reports whether text has the credential's form (not
// whether it is valid).
func IsClientCredential(text string) bool { return strings.HasPrefix(text, credentialPrefix) }

// ParseClientCredential splits a credential's text into id and secret; ok
// is false for anything not of the credential's exact form.
func ParseClientCredential(text string) (id, secret string, ok bool) {
	rest, ok := strings.CutPrefix(text, credentialPrefix)
	if !ok {
		return "", "", false
	}
	id, secret, ok = strings.Cut(rest, "_")
	if !ok || len(id) != 2*credentialIDBytes || len(secret) != 2*credentialSecretBytes || !lowerHex(id) || !lowerHex(secret) {
		return "", "", false
	}
	return id, secret, true
}

// SecretDigest is the stored form of a credential's secret: SHA-256, hex.
func SecretDigest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CredentialPath is where `clawd token issue --client KIND` keeps the
// credential for clients of this machine's user to present (`clawd connect
// --client KIND`, an HTTP client's header helper): the workspace token file's
// path plus "." and the kind, mode 0600.
func CredentialPath(tokenPath, kind string) string { return tokenPath + "." + kind }

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
