package transport

// Streamable HTTP under MCP 2026-07-28 (docs/transports.md, "Protocol
// revisions"): no session, every POST stands alone. The transport's part is
// HTTP only: which requests take this path, the mirrored headers checked
// against the body, the status of an answer, and the per-request SSE
// stream. What the body means is asked of internal/mcp (ClaimedVersion,
// HeaderValues, HandleStateless, StatusFor); the transport names no MCP
// method itself; mcp.IsStateless says which POSTs take this path.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
)

// The request headers 2026-07-28 adds (names compare case-insensitively;
// net/http canonicalizes them and trims the whitespace around values).
const (
	HeaderMethod = "Mcp-Method"
	HeaderName   = "Mcp-Name"
)

// sseKeepAlive is how often an open subscriptions/listen stream gets an
// SSE comment while no notification flows, so that idle timeouts of
// clients and intermediaries do not close it.
const sseKeepAlive = 25 * time.Second

// checkHeaders compares the mirrored headers with the body, as the
// 2026-07-28 transport requires of a server that reads the body: the
// version first, then the method, then the name. It returns "" when they
// agree, or what is wrong. A notification is not checked (the revision
// defines no header rules for notifications).
func checkHeaders(r *http.Request, msg *jsonrpc.Message) string {
	if msg.IsNotification() || msg.IsResponse || msg.Batch != nil {
		return ""
	}
	hv := r.Header.Get(HeaderProtocolVersion)
	claim, claimed := mcp.ClaimedVersion(msg)
	if !claimed && (hv == "" || mcp.IsSupportedVersion(hv)) {
		// Neither the body nor the header speaks 2026-07-28 (a
		// server/discover without _meta): there is nothing to mirror, and
		// the body's missing _meta is the error (-32602).
		return ""
	}
	if claimed {
		switch {
		case len(r.Header.Values(HeaderProtocolVersion)) > 1:
			return "MCP-Protocol-Version is sent more than once"
		case hv == "":
			return fmt.Sprintf("header mismatch: MCP-Protocol-Version is required; the body's _meta claims %q", claim)
		case hv != claim:
			return fmt.Sprintf("header mismatch: MCP-Protocol-Version %q does not match the body's _meta protocolVersion %q", clip(hv), clip(claim))
		}
	}
	method, name, hasName := mcp.HeaderValues(msg)
	switch hm := r.Header.Values(HeaderMethod); {
	case len(hm) == 0:
		return "header mismatch: the Mcp-Method header is required (it must equal the body's method)"
	case len(hm) > 1:
		return "header mismatch: Mcp-Method is sent more than once"
	case strings.TrimSpace(hm[0]) != method:
		return fmt.Sprintf("header mismatch: Mcp-Method %q does not match the body's method %q", clip(hm[0]), clip(method))
	}
	if !hasName {
		return ""
	}
	hn := r.Header.Values(HeaderName)
	switch {
	case len(hn) == 0:
		return fmt.Sprintf("header mismatch: the Mcp-Name header is required for %s (it must equal the body's name or uri)", method)
	case len(hn) > 1:
		return "header mismatch: Mcp-Name is sent more than once"
	}
	got, ok := decodeHeaderValue(strings.TrimSpace(hn[0]))
	if !ok {
		return "header mismatch: Mcp-Name has characters a header value may not carry, or a =?base64?...?= value that does not decode"
	}
	if got != name {
		return fmt.Sprintf("header mismatch: Mcp-Name %q does not match the body's value %q", clip(got), clip(name))
	}
	return ""
}

// decodeHeaderValue undoes the revision's value encoding: "=?base64?X?="
// is the standard Base64 of the UTF-8 value; anything else is the value
// itself and must be visible ASCII, space or tab.
func decodeHeaderValue(v string) (string, bool) {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-len("?=")])
		if err != nil || !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return "", false
		}
	}
	return v, true
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// postStateless serves a POST on the stateless path, after the checks every
// POST passes (peer, Host, Origin, credential, path, method, Content-Type,
// size, parse). No Mcp-Session-Id is read, required or minted.
func (h *HTTPServer) postStateless(w http.ResponseWriter, r *http.Request, ident Identity, msg *jsonrpc.Message) {
	if msg.Batch != nil {
		h.reject(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
			"bad request: JSON-RPC batches are not part of MCP "+mcp.ModernVersions[0]+"; send one message per POST")
		return
	}
	if msg.IsNotification() || msg.IsResponse {
		// Accepted and dropped: without a session a notifications/cancelled
		// has no scope to be matched in (closing a request's response
		// cancels it instead), and clawd sends no requests to answer.
		setWriteDeadline(w, h.timeouts.write)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if why := checkHeaders(r, msg); why != "" {
		setWriteDeadline(w, h.timeouts.write)
		writeJSON(w, http.StatusBadRequest, jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(mcp.CodeHeaderMismatch, why)))
		return
	}
	method := "bearer"
	if ident.CredentialID != "" {
		method = "credential"
	}
	out := &sseWriter{w: w, h: h, accepts: acceptsSSE(r)}
	st := &mcp.Stateless{
		Caller: chain.Caller{Transport: "http", AuthMethod: method, Kind: ident.Kind,
			CredentialID: ident.CredentialID, Subject: h.Subject},
		ReplyToCancelled: true,
		Notify:           out.notify,
	}
	// An open subscription runs until its client ends it: its connection
	// may give way at the connection cap (httpRank), and its credential is
	// checked again at each keep-alive, so a credential revoked or a token
	// rotated since it opened ends it (stillValid).
	var listening atomic.Bool
	tc, _ := r.Context().Value(connKey{}).(*trackedConn)
	st.Listening = func() {
		listening.Store(true)
		if tc != nil {
			tc.listening.Store(true)
		}
	}
	if !out.accepts {
		st.Notify = nil // a JSON-only client gets the answer alone
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := out.keepAlive(func() {
		if listening.Load() && !h.stillValid(r) {
			cancel()
		}
	})
	resp, err := h.Server.HandleStateless(ctx, st, msg)
	stop()
	var busy *mcp.BusyError
	if errors.As(err, &busy) {
		w.Header().Set("Retry-After", "1")
		h.reject(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, busy.Error())
		return
	}
	out.finish(resp, msg.ID)
}

// stillValid checks the credential of a long-lived request (an open
// subscription) again. A refused one is logged and, when its secret
// matched (revoked, of another workspace), audited as on any request.
func (h *HTTPServer) stillValid(r *http.Request) bool {
	if h.Auth == nil {
		return false
	}
	tok, _ := bearerToken(r.Header.Values("Authorization"))
	ident, reason, ok := h.Auth.Authenticate(tok)
	if ok {
		return true
	}
	h.authLog.addDetail(1, "http: ended a subscription: its credential is refused now", "reason", reason, "peer", r.RemoteAddr)
	if ident.CredentialID != "" {
		h.auditRefusal(r, ident, reason)
	}
	return false
}

// acceptsSSE reports whether the client listed text/event-stream in Accept.
func acceptsSSE(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

// sseWriter answers one stateless request: as one JSON body, or, once a
// notification must precede the answer (progress, a log message, a
// subscription), as an SSE stream of that request alone, ended by the
// answer. Closing that stream ends the request's context, which cancels
// the call (docs/transports.md).
type sseWriter struct {
	w       http.ResponseWriter
	h       *HTTPServer
	accepts bool
	legacy  bool // a legacy session's answer: errors keep status 200

	mu      sync.Mutex
	started bool
	failed  bool
	done    bool
}

// notify writes one notification as an SSE event, starting the stream.
func (s *sseWriter) notify(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.failed {
		return
	}
	s.start()
	s.event(msg)
}

func (s *sseWriter) start() {
	if s.started {
		return
	}
	s.started = true
	hd := s.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

// event writes one SSE event and flushes it, within the write timeout.
func (s *sseWriter) event(msg []byte) {
	setWriteDeadline(s.w, s.h.timeouts.write)
	b := make([]byte, 0, len(msg)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, msg...)
	b = append(b, "\n\n"...)
	if _, err := s.w.Write(b); err != nil {
		s.failed = true
		return
	}
	if err := http.NewResponseController(s.w).Flush(); err != nil {
		s.failed = true
	}
}

// keepAlive writes an SSE comment every keep-alive interval (sseKeepAlive)
// while the stream is open, after calling tick; the returned function stops
// it.
func (s *sseWriter) keepAlive(tick func()) (stop func()) {
	if !s.accepts {
		return func() {}
	}
	quit := make(chan struct{})
	go func() {
		t := time.NewTicker(s.h.timeouts.keepAlive)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				tick()
				s.mu.Lock()
				if s.started && !s.done && !s.failed {
					setWriteDeadline(s.w, s.h.timeouts.write)
					if _, err := s.w.Write([]byte(":\n\n")); err == nil {
						http.NewResponseController(s.w).Flush()
					} else {
						s.failed = true
					}
				}
				s.mu.Unlock()
			}
		}
	}()
	return func() { close(quit) }
}

// begun reports whether the SSE stream has started.
func (s *sseWriter) begun() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// finish writes the answer: the last event of a started stream, or a JSON
// body whose status follows its error code (mcp.StatusFor).
func (s *sseWriter) finish(resp []byte, id jsonrpc.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if resp == nil {
		if !s.started {
			setWriteDeadline(s.w, s.h.timeouts.write)
			s.w.WriteHeader(http.StatusAccepted)
		}
		return
	}
	if s.started {
		if !s.failed {
			s.event(resp)
		}
		return
	}
	setWriteDeadline(s.w, s.h.timeouts.write)
	status := http.StatusOK
	if !s.legacy {
		status = statusOf(resp, id)
	}
	writeJSON(s.w, status, resp)
}

// statusOf is the HTTP status of a stateless answer: mcp.StatusFor of its
// error code, 200 for a result.
func statusOf(resp []byte, id jsonrpc.ID) int {
	prefix := `{"jsonrpc":"2.0","id":` + id.Raw() + `,"error":{"code":`
	if !strings.HasPrefix(string(resp[:min(len(resp), len(prefix)+8)]), prefix) {
		return http.StatusOK
	}
	rest := string(resp[len(prefix):])
	end := strings.IndexAny(rest, ",}")
	if end < 0 {
		return http.StatusOK
	}
	code, err := strconv.Atoi(rest[:end])
	if err != nil {
		return http.StatusOK
	}
	return mcp.StatusFor(code)
}
