package transport

// The HTTP transport's step 1: which credential a request presents, what it
// proves, and the answer to a refused one (docs/transports.md, docs/security.md).

import (
	"net/http"
	"strings"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
)

// Identity is what a credential proves about a connection: the entity kind
// it maps to and, for a per-client credential, that credential's id. It
// never comes from what the client says about itself (docs/security.md).
type Identity struct {
	Kind         string
	CredentialID string // "" for the workspace token
}

// Authenticator checks a bearer credential: the workspace token or a
// per-client credential. reason says why one was refused (for the refusal's
// data.reason and the log), e.g. "invalid_token" or "credential_revoked".
// A per-client credential whose secret matched but that is refused anyway
// (revoked, or issued for another workspace) still returns its id: the
// refusal is then audited as that credential's (HTTPServer.Audit).
type Authenticator interface {
	Authenticate(bearer string) (id Identity, reason string, ok bool)
}

// authenticate checks the bearer credential and refuses a request whose
// credential is missing or refused.
//
// The refusal is 403 with no WWW-Authenticate challenge, not 401: MCP
// clients (Claude Code, MCP Inspector, OpenCode's `mcp auth`) answer any
// 401 by starting OAuth discovery and dynamic client registration, which a
// local daemon with a static token cannot finish, so the user saw an OAuth
// error instead of "send a token". On 403 Claude Code says "Needs
// authentication" and SDK clients report this body, which says what to
// send (docs/transports.md has the measurements). Refusals are logged, one
// line per reason at most every connLogInterval, with the peer's address.
func (h *HTTPServer) authenticate(w http.ResponseWriter, r *http.Request) (Identity, bool) {
	tok, ok := bearerToken(r.Header.Values("Authorization"))
	reason := "missing_bearer_token"
	var ident Identity
	if ok {
		reason = "invalid_token"
		if h.Auth != nil {
			var why string
			if ident, why, ok = h.Auth.Authenticate(tok); ok {
				return ident, true
			}
			if why != "" {
				reason = why
			}
		}
	}
	kind := 1
	if reason == "missing_bearer_token" {
		kind = 0
	}
	h.authLog.addDetail(kind, "http: refused a request for its credential", "reason", reason, "peer", r.RemoteAddr)
	if ident.CredentialID != "" {
		h.auditRefusal(r, ident, reason)
	}
	if isAPI(r) {
		h.refuseAPICredential(w, reason)
		return Identity{}, false
	}
	body := jsonrpc.AppendError(nil, jsonrpc.ID{}, &jsonrpc.Error{
		Code: chain.CodeUnauthorized,
		Message: "unauthorized: " + unauthorizedWhy(reason) +
			"; send Authorization: Bearer <token> (clawd token show prints it; clawd token issue makes a per-client credential)",
		Data: map[string]any{"reason": reason, "hint": "send Authorization: Bearer <token> with the token from the workspace token file (clawd token show) or a per-client credential (clawd token issue)"},
	})
	setWriteDeadline(w, h.timeouts.write)
	writeJSON(w, AuthRefusedStatus, body)
	return Identity{}, false
}

// auditRefusal records a request refused for a per-client credential whose
// secret matched (revoked, or of another workspace), or for a valid
// credential naming a session another credential started, as a Deny at
// step auth, durable before the answer, as the chain records such a
// credential's call on the socket: whoever still presents a revoked
// credential, or someone else's session id, is on record. The row names
// the request instead of a tool (a refused credential's body is never
// read). Tokens and credentials nobody issued leave no row: they name no
// one, and anyone who can reach loopback could write rows with them.
func (h *HTTPServer) auditRefusal(r *http.Request, ident Identity, reason string) {
	if h.Audit == nil {
		return
	}
	request := r.Method + " " + r.URL.Path
	if len(request) > 200 {
		request = request[:200]
	}
	if _, err := h.Audit.Record(refusalRecord("http", request, h.Subject, ident, reason)); err != nil {
		h.Logger.Error("http: writing the audit row of a refused credential failed", "credential", ident.CredentialID, "reason", reason, "err", err)
	}
}

// refusalRecord is the audit row of a credential refused at step auth
// before any tool was named: the credential's entity and id, and the
// request in place of a tool.
func refusalRecord(transport, request, subject string, ident Identity, reason string) *chain.AuditRecord {
	return &chain.AuditRecord{
		Time:         time.Now(),
		EntityID:     ident.Kind + ":" + subject,
		TrustLevel:   chain.NoTrustLevel,
		Result:       chain.ResultDeny,
		Reason:       reason,
		Step:         chain.StepAuth,
		Transport:    transport,
		RequestID:    strings.ToValidUTF8(request, "\uFFFD"),
		CredentialID: ident.CredentialID,
	}
}

// AuthRefusedStatus is the HTTP status of a refused credential (see
// authenticate for why it is not 401).
const AuthRefusedStatus = http.StatusForbidden

// unauthorizedWhy is the sentence for a refused credential's reason code.
func unauthorizedWhy(reason string) string {
	switch reason {
	case "missing_bearer_token":
		return "no bearer token was sent"
	case "invalid_token":
		return "the bearer token is not this workspace's current token (wrong, or rotated since)"
	case "malformed_credential":
		return "the per-client credential is malformed"
	case "unknown_credential":
		return "the per-client credential is not known to this clawd (wrong, or issued with another data directory)"
	case "credential_revoked":
		return "the per-client credential was revoked (clawd token list shows it)"
	case "credential_for_another_workspace":
		return "the per-client credential was issued for another workspace"
	case "credential_unverifiable":
		return "the per-client credential could not be checked (see clawd's log)"
	}
	return reason
}

// forbidSession refuses a request that names a session started with another
// credential: a session id routes requests, it does not authenticate them,
// so a credential may use only the sessions it started. The request passed
// authentication, so its refusal is audited as the presenting credential's
// (the sign of a session id that leaked).
//
// The same credential mapping to another kind than when the session began
// is not someone else: the workspace token's kind is default_client_kind,
// read live, and a reload changed it. That session ends (404), so its
// client initializes again under the kind now configured, rather than
// being refused for good (MCP clients initialize again on 404, not 403).
func (h *HTTPServer) forbidSession(w http.ResponseWriter, r *http.Request, hs *httpSession, ident Identity) {
	if hs.ident.CredentialID == ident.CredentialID {
		h.sessions.remove(hs.id)
		h.reject(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest,
			"session not found: it ended because the entity kind of its credential changed (default_client_kind); send initialize without Mcp-Session-Id to start a new one")
		return
	}
	h.auditRefusal(r, ident, "session_of_another_credential")
	h.reject(w, http.StatusForbidden, chain.CodeUnauthorized,
		"forbidden: this Mcp-Session-Id was started with another credential; initialize a session of your own")
}
