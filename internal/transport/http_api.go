package transport

// The REST API's place on the HTTP listener. The transport knows nothing of
// what the API does: the daemon supplies it as an http.Handler
// (HTTPServer.API), and every request under /api/ passes the same checks as
// /mcp first (loopback peer, Host, Origin, bearer credential). What the
// transport adds is the shape of its own refusals on these paths (a JSON
// object {"error", "message"} instead of a JSON-RPC error, and 401 with a
// Bearer challenge for a refused credential: REST clients are not MCP
// clients, which is why /mcp answers 403 instead) and the caller's Identity
// in the request's context (RequestIdentity).

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"
)

// PathAPI is the prefix of the REST API's paths.
const PathAPI = "/api/"

// isAPI reports whether r is for the REST API.
func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, PathAPI) }

type identityKey struct{}

// RequestIdentity returns the identity the transport authenticated for an
// API request (the handler's r.Context()). ok is false outside one: a
// handler must then refuse, never assume a caller.
func RequestIdentity(ctx context.Context) (id Identity, ok bool) {
	id, ok = ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// serveAPI hands an authenticated request to the API handler. The handler
// reads the body itself (with its own size limit); until it deletes the
// Connection header (once the whole body is in), its answer closes the
// connection, as every answer before a body is read does here.
func (h *HTTPServer) serveAPI(w http.ResponseWriter, r *http.Request, ident Identity) {
	if h.API == nil {
		h.refuseAPI(w, http.StatusNotFound, "not_found", "this clawd serves no REST API; the MCP endpoint is POST /mcp")
		return
	}
	h.API.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, ident)))
}

// refuse answers a refusal of the peer, Host or Origin check in the shape
// the path's clients read.
func (h *HTTPServer) refuse(w http.ResponseWriter, r *http.Request, status int, code, msg string, rpcCode int) {
	if isAPI(r) {
		h.refuseAPI(w, status, code, msg)
		return
	}
	h.reject(w, status, rpcCode, msg)
}

// refuseAPI writes {"error": code, "message": msg}.
func (h *HTTPServer) refuseAPI(w http.ResponseWriter, status int, code, msg string) {
	setWriteDeadline(w, h.timeouts.write)
	b, _ := json.Marshal(struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}{code, msg})
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, append(b, '\n'))
}

// refuseAPICredential answers an API request whose credential was refused:
// 401 with a Bearer challenge (RFC 6750), which REST clients expect.
func (h *HTTPServer) refuseAPICredential(w http.ResponseWriter, reason string) {
	challenge := `Bearer realm="clawd"`
	if reason != "missing_bearer_token" { // RFC 6750 3.1: no error code when no token was sent
		challenge += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	h.refuseAPI(w, http.StatusUnauthorized, "unauthorized",
		"unauthorized: "+unauthorizedWhy(reason)+"; send Authorization: Bearer <token> with the workspace token (clawd token show prints it)")
}
