package identity

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/golang-jwt/jwt/v5"
)

// DefaultTTL is how long a token is valid: long enough for one call to
// reach the server and the server to call its backend, short enough that a
// token a server logged is useless soon after.
const DefaultTTL = 60 * time.Second

// Forwarder decides what one call carries. The zero value forwards in meta
// mode and refuses signed mode (no key).
type Forwarder struct {
	// Issuer is the tokens' iss (Issuer(workspaceID)).
	Issuer string
	// KeyPath is the signing key (KeyPath). It is opened and checked on
	// every signed call (and read again when the file changed), so a key
	// removed, chmod'ed open or replaced by garbage stops signing at once;
	// "" refuses signed mode.
	KeyPath string
	// TTL is the tokens' lifetime (DefaultTTL when zero).
	TTL time.Duration
	// Now is the clock (time.Now when nil); tests set it.
	Now func() time.Time

	cache atomic.Pointer[cachedKey] // the parsed key of the file's current version
}

// Refused is the error of a call clawd would not forward: signed mode
// without a usable key, or forwarding on without a caller to forward.
// Nothing was sent to the server.
type Refused struct {
	Server string
	Mode   Mode
	Detail string
	Err    error
}

func (e *Refused) Error() string {
	msg := "identity_refused: upstream server " + e.Server + " is set to receive the caller's identity on every call (--identity " +
		string(e.Mode) + "), and " + e.Detail + ", so the call was not sent"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Refused) Unwrap() error { return e.Err }

// AuditDetail is the outcome detail the chain records for the call.
func (e *Refused) AuditDetail() string { return "identity_refused" }

// Call is what Apply returns for one call.
type Call struct {
	Args jsontext.Value
	// Meta is the value for params._meta[MetaKey], nil when nothing is
	// forwarded.
	Meta map[string]any
}

// Apply rewrites one call's arguments for the server named server under
// cfg, for the caller entity (the chain's entity id, never anything the
// client or model said). Whatever the mode, members named DefaultUserArg,
// DefaultTokenArg or cfg.Arg are removed from the arguments first; with
// forwarding on, clawd's own value is then added under cfg.ArgName() and
// Meta is set. An error means the call must not be sent; a *Refused is a
// refusal to audit as identity_refused.
func (f *Forwarder) Apply(cfg Config, server, entity string, args jsontext.Value) (Call, error) {
	strip := []string{DefaultUserArg, DefaultTokenArg, cfg.Arg}
	if cfg.Mode == ModeOff || cfg.Mode == "" {
		a, err := Rewrite(args, strip, "", "")
		return Call{Args: a}, err
	}
	if entity == "" {
		return Call{}, &Refused{Server: server, Mode: cfg.Mode, Detail: "the call has no authenticated caller"}
	}
	value := entity
	meta := map[string]any{"entity": entity}
	if cfg.Mode == ModeSigned {
		tok, err := f.Sign(entity, cfg.AudienceFor(server))
		if err != nil {
			return Call{}, &Refused{Server: server, Mode: cfg.Mode, Detail: "clawd cannot sign it", Err: err}
		}
		value = tok
		meta["token"] = tok
	} else if cfg.Mode != ModeMeta {
		return Call{}, &Refused{Server: server, Mode: cfg.Mode, Detail: fmt.Sprintf("its identity mode %q is unknown", cfg.Mode)}
	}
	a, err := Rewrite(args, strip, cfg.ArgName(), value)
	if err != nil {
		return Call{}, err
	}
	return Call{Args: a, Meta: meta}, nil
}

// Sign returns a compact EdDSA JWT: header alg EdDSA, typ JWT, kid the
// key's thumbprint; claims iss, sub (the entity), aud, iat, exp (iat +
// TTL) and a random jti.
func (f *Forwarder) Sign(subject, audience string) (string, error) {
	if f.KeyPath == "" {
		return "", errors.New("no signing key is configured")
	}
	if f.Issuer == "" {
		return "", errors.New("no issuer is configured")
	}
	k, err := loadKey(f.KeyPath, &f.cache)
	if err != nil {
		return "", err
	}
	return k.sign(f.Issuer, subject, audience, f.now(), f.ttl())
}

func (k *Key) sign(iss, sub, aud string, now time.Time, ttl time.Duration) (string, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	claims := jwt.RegisteredClaims{
		Issuer:    iss,
		Subject:   sub,
		Audience:  jwt.ClaimStrings{aud},
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		ID:        base64.RawURLEncoding.EncodeToString(id[:]),
	}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	t.Header["kid"] = k.KID
	return t.SignedString(k.priv)
}

func (f *Forwarder) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Forwarder) ttl() time.Duration {
	if f.TTL > 0 {
		return f.TTL
	}
	return DefaultTTL
}
