// Package identity forwards the calling entity to an upstream MCP server
// that asked for it ("on behalf of"): clawd, not the model and not the
// client, writes who is calling into each proxied tools/call, in
// params._meta["clawd/identity"] and in one reserved tool argument, and
// overwrites whatever value of the same name the call carried.
//
// Two modes send something: meta sends the entity id as plain text (the
// server must trust clawd and the channel to it); signed sends a short-lived
// EdDSA JWT a server can verify with clawd's public key (clawd mcp
// identity-key). With forwarding off, the reserved names are removed from
// the arguments so a model cannot pose as a user to a server written for a
// gateway that injects them. docs/upstreams.md has the contract.
package identity

import (
	"fmt"
	"strings"
)

// Mode says what clawd forwards to one server.
type Mode string

const (
	// ModeOff forwards nothing (the default) and strips the reserved
	// arguments a model may have supplied.
	ModeOff Mode = "off"
	// ModeMeta forwards the entity id in _meta and the reserved argument.
	ModeMeta Mode = "meta"
	// ModeSigned forwards a signed JWT whose sub is the entity id.
	ModeSigned Mode = "signed"
)

// Default reserved argument names: the entity id in meta mode, the token in
// signed mode (the names a gateway-aware server already reads).
const (
	DefaultUserArg  = "__mateclaw_user__"
	DefaultTokenArg = "__mateclaw_token__"
)

// MetaKey is the params._meta key clawd writes.
const MetaKey = "clawd/identity"

// Config is one server's identity forwarding setting as stored.
type Config struct {
	Mode Mode
	// Arg is the reserved argument; "" means the mode's default
	// (DefaultUserArg or DefaultTokenArg).
	Arg string
	// Audience is the JWT's aud in signed mode; "" means the server's name.
	Audience string
}

// ParseMode accepts off, meta or signed ("" is off).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeOff:
		return ModeOff, nil
	case ModeMeta, ModeSigned:
		return Mode(s), nil
	}
	return "", fmt.Errorf("identity mode %q: use off (forward nothing), meta (the entity id as text) or signed (a JWT signed by clawd)", s)
}

// MaxArg and MaxAudience bound the two strings.
const (
	MaxArg      = 64
	MaxAudience = 256
)

// Validate says what is wrong with c and what to use instead.
func (c Config) Validate() error {
	if _, err := ParseMode(string(c.Mode)); err != nil {
		return err
	}
	if c.Arg != "" {
		if len(c.Arg) > MaxArg || !argChars(c.Arg) {
			return fmt.Errorf("identity argument %q: use 1-%d letters, digits or '_' (e.g. %s)", c.Arg, MaxArg, DefaultUserArg)
		}
	}
	if c.Audience != "" {
		if len(c.Audience) > MaxAudience || strings.ContainsFunc(c.Audience, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return fmt.Errorf("identity audience %q: use 1-%d printable characters without spaces (a URL or a name the server checks)", c.Audience, MaxAudience)
		}
	}
	return nil
}

// ArgName is the reserved argument clawd writes in this mode.
func (c Config) ArgName() string {
	if c.Arg != "" {
		return c.Arg
	}
	if c.Mode == ModeSigned {
		return DefaultTokenArg
	}
	return DefaultUserArg
}

// AudienceFor is the aud of tokens for the server named server.
func (c Config) AudienceFor(server string) string {
	if c.Audience != "" {
		return c.Audience
	}
	return server
}

func argChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}
