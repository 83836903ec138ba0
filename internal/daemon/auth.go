package daemon

import (
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/token"
	"github.com/clawde/clawd/internal/transport"
)

// credentials is the daemon's transport.Authenticator: the workspace token
// maps to the configured default_client_kind, a per-client credential of
// this workspace to its own kind (docs/security.md). Which kind a
// connection gets is decided here and nowhere else.
type credentials struct {
	tokens    *token.Issuer // nil where no workspace token is issued (the socket)
	db        *store.DB
	workspace string
	kind      func() string // the live default_client_kind
}

func (d *Daemon) credentials(tokens *token.Issuer) *credentials {
	return &credentials{tokens: tokens, db: d.Store, workspace: d.WorkspaceID,
		kind: func() string { return d.Config().DefaultClientKind }}
}

// Authenticate implements transport.Authenticator.
func (c *credentials) Authenticate(bearer string) (transport.Identity, string, bool) {
	if token.IsClientCredential(bearer) {
		id, secret, ok := token.ParseClientCredential(bearer)
		if !ok {
			return transport.Identity{}, "malformed_credential", false
		}
		kind, reason, err := c.db.CheckCredential(c.workspace, id, token.SecretDigest(secret))
		if err != nil {
			return transport.Identity{}, "credential_unverifiable", false
		}
		if reason != "" {
			// Its secret matched: a refusal is recorded as its own.
			var ident transport.Identity
			if kind != "" {
				ident = transport.Identity{Kind: kind, CredentialID: id}
			}
			return ident, reason, false
		}
		return transport.Identity{Kind: kind, CredentialID: id}, "", true
	}
	if c.tokens != nil && c.tokens.Check(bearer) {
		return transport.Identity{Kind: c.kind()}, "", true
	}
	return transport.Identity{}, "invalid_token", false
}
