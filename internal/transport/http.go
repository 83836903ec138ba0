package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
)

// HTTP paths.
const (
	PathMCP    = "/mcp"
	PathHealth = "/health"
)

// HeaderSessionID and HeaderProtocolVersion are the Streamable HTTP headers.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
)

// Server-side timeouts against slow or stuck clients. There is no overall
// write timeout: a tool call may legitimately run for minutes; each response
// gets writeTimeout once it is ready.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second // headers and body
	idleTimeout       = 2 * time.Minute  // keep-alive between requests
	writeTimeout      = 30 * time.Second // writing one finished response
	maxHeaderBytes    = 64 << 10
	shutdownGrace     = 5 * time.Second
)

type timeouts struct{ readHeader, read, idle, write, keepAlive time.Duration }

func (t *timeouts) fill() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.readHeader, readHeaderTimeout)
	def(&t.read, readTimeout)
	def(&t.idle, idleTimeout)
	def(&t.write, writeTimeout)
	def(&t.keepAlive, sseKeepAlive)
}

// HTTPServer serves MCP Streamable HTTP and GET /health on a loopback
// listener, both protocol eras on one endpoint. Every request passes, in
// this order:
//
//	peer not loopback                     403
//	Host not 127.0.0.1/localhost/[::1]    403
//	Origin present and not such a host    403
//	(GET /health stops here: no token needed)
//	bearer token missing or wrong         403  (JSON-RPC -32001 unauthorized; see authenticate)
//	path under /api/                      the API handler (http_api.go; refusals above are 401/403 JSON objects there)
//	path not /mcp or /                    404
//	method not POST/DELETE                405
//	Content-Type not application/json     415
//	body over MaxBodyBytes                413
//	body not JSON-RPC                     400
//
// Then a request mcp.IsStateless picks (its _meta claims a protocol
// version, it is server/discover, or its MCP-Protocol-Version is not a
// legacy version) is served without a session (http_stateless.go: the mirrored headers checked against the
// body, 400 -32020 on a mismatch; the answer as JSON or a per-request SSE
// stream). Any other takes the legacy session path:
//
//	no Mcp-Session-Id (not initialize)    400
//	unknown or expired Mcp-Session-Id     404
//	tools/call over max_concurrency       503 (the mcp.Server's limit, all sessions and stateless calls)
//
// At most MaxConns connections are open. At the cap a new connection takes
// the slot of one that matters less (httpRank: unauthenticated and idle
// first, an open subscription last); it gets 503 only when every slot runs
// an authenticated request that is not a subscription.
// The first request head is due within the header timeout of the accept.
//
// Each Mcp-Session-Id is one mcp.Session, holding pending cancels (a cancel
// may overtake its call on another connection) and answering cancelled
// calls (every POST must get an answer).
type HTTPServer struct {
	Server  *mcp.Server
	Auth    Authenticator
	Subject string // the workspace id
	Health  func() Health
	Logger  *slog.Logger
	// API, if set, serves the REST API under /api/ (http_api.go) after the
	// same peer, Host, Origin and credential checks as /mcp.
	API http.Handler
	// Audit, if set, records each request refused for a per-client
	// credential whose secret matched (revoked, or issued for another
	// workspace) as a Deny row at step auth (http_auth.go).
	Audit chain.AuditLog

	MaxBodyBytes int64         // default Server.MessageLimit() (max_message_bytes)
	MaxSessions  int           // default DefaultMaxSessions
	SessionIdle  time.Duration // default DefaultSessionIdle
	MaxConns     int           // open connections; default DefaultMaxConns

	now      func() time.Time
	timeouts timeouts // zero fields take the defaults above; tests shorten them
	once     sync.Once
	sessions *sessionTable
	conns    *connTable // open connections against MaxConns
	connLog  *connLog   // the summary of refused and shed connections
	checkLog *connLog   // the summary of requests the peer, Host and Origin checks refused
	authLog  *connLog   // the summary of requests refused for their credential
	// connLogEvery is connLog's interval (default connLogInterval).
	connLogEvery time.Duration
	// laneServed counts the /health answers the health lane gave without
	// net/http (tests tell the two paths apart by it).
	laneServed atomic.Int64
}

func (h *HTTPServer) init() {
	h.once.Do(func() {
		if h.now == nil {
			h.now = time.Now
		}
		if h.Logger == nil {
			h.Logger = slog.New(slog.DiscardHandler)
		}
		if h.MaxBodyBytes <= 0 {
			h.MaxBodyBytes = int64(h.Server.MessageLimit())
		}
		if h.MaxSessions <= 0 {
			h.MaxSessions = DefaultMaxSessions
		}
		if h.SessionIdle <= 0 {
			h.SessionIdle = DefaultSessionIdle
		}
		if h.MaxConns <= 0 {
			h.MaxConns = DefaultMaxConns
		}
		h.timeouts.fill()
		h.sessions = newSessionTable(h.MaxSessions, h.SessionIdle, h.now)
		h.conns = newConnTable(h.MaxConns, httpRank)
		// A request waiting unread in the socket (the goroutine that reads
		// the connection has not run yet, as in a flood of connects) is
		// spared: its client has sent it, and it would be answered in
		// microseconds.
		h.conns.spare = func(c *trackedConn) bool { return inputPending(c.Conn) }
		h.conns.spareTries = httpSpareTries
		h.connLog = newConnLog(h.Logger, h.connLogEvery,
			"http: too many open connections or requests too slow: connections refused or closed since the last report",
			[]any{"max_conns", h.MaxConns}, "refused", "shed_unauthenticated", "shed_idle_authenticated", "head_timeout", "shed_subscription")
		h.authLog = newConnLog(h.Logger, h.connLogEvery,
			"http: requests refused for a missing or invalid credential since the last report",
			nil, "missing_bearer_token", "refused_credential")
		h.checkLog = newConnLog(h.Logger, h.connLogEvery,
			"http: requests refused by the peer check (non-loopback peer), the Host check (DNS rebinding?) and the Origin check (cross-origin) since the last report",
			nil, "non_loopback_peer", "foreign_host", "cross_origin")
	})
}

// Serve runs the HTTP server on ln until ctx ends, then closes every
// session (cancelling running calls) and shuts down.
func (h *HTTPServer) Serve(ctx context.Context, ln net.Listener) error {
	h.init()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: h.timeouts.readHeader,
		ReadTimeout:       h.timeouts.read,
		IdleTimeout:       h.timeouts.idle,
		MaxHeaderBytes:    maxHeaderBytes,
		// net/http answers "OPTIONS *" itself, before the handler, unless
		// told not to: it would skip the peer, Host and Origin checks.
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(h.Logger.Handler(), slog.LevelDebug),
		ConnState:                    h.connState,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc := trackedOf(c); tc != nil {
				return context.WithValue(ctx, connKey{}, tc)
			}
			return ctx
		},
	}
	defer h.connLog.stop()
	defer h.checkLog.stop()
	defer h.authLog.stop()
	lane := newHealthLane(h, ln)
	go lane.run()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lane) }()
	sweep := time.NewTicker(min(h.SessionIdle/4, time.Minute))
	defer sweep.Stop()
	for {
		select {
		case err := <-errc:
			h.sessions.closeAll()
			return err
		case <-sweep.C:
			if n := h.sessions.sweep(); n > 0 {
				h.Logger.Debug("http: expired idle sessions", "count", n)
			}
		case <-ctx.Done():
			h.sessions.closeAll()
			h.Server.EndSubscriptions() // each open subscriptions/listen gets its closing result
			sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			err := srv.Shutdown(sctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				srv.Close()
			}
			return nil
		}
	}
}

// connKey is the request context key of the request's *trackedConn.
type connKey struct{}

// Counters of connLog.
const (
	evRefused = iota
	evShedUnauthed
	evShedIdleAuthed
	evHeadTimeout
	evShedListening
)

// connState follows net/http's view of a connection into the table: busy
// from a complete request head to the end of its response.
func (h *HTTPServer) connState(c net.Conn, s http.ConnState) {
	tc := trackedOf(c)
	if tc == nil {
		return
	}
	switch s {
	case http.StateActive:
		tc.headDone.Store(true)
		tc.listening.Store(false) // a new request: not (yet) a subscription
		tc.busy()
	case http.StateIdle:
		tc.idle(monotime())
	}
}

// ServeHTTP applies the checks in the documented order and dispatches.
func (h *HTTPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.init()
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.ContentLength != 0 {
		// Until the body is read (post does, once the token is checked), an
		// answer closes the connection: otherwise net/http would read the
		// rest of the body, at whatever pace the client sends it, for up to
		// the read timeout after answering.
		w.Header().Set("Connection", "close")
		defer func() {
			if w.Header().Get("Connection") == "close" {
				http.NewResponseController(w).SetReadDeadline(time.Now())
			}
		}()
	}
	// A refusal of these checks gets a line of its own only when the
	// summary is not holding lines back (checkLog): a local process could
	// otherwise grow the log by a line per request.
	if !loopbackPeer(r.RemoteAddr) {
		h.checkLog.addDetail(0, "http: refused a non-loopback peer", "peer", r.RemoteAddr)
		h.refuse(w, r, http.StatusForbidden, "forbidden_peer", "forbidden: only loopback peers may connect", jsonrpc.CodeInvalidRequest)
		return
	}
	if !allowedHost(r.Host) {
		h.checkLog.addDetail(1, "http: refused a request for a foreign Host (DNS rebinding?)", "host", r.Host)
		h.refuse(w, r, http.StatusForbidden, "forbidden_host",
			"forbidden: the Host header must be 127.0.0.1, localhost or [::1] (with an optional port)", jsonrpc.CodeInvalidRequest)
		return
	}
	for _, o := range r.Header.Values("Origin") {
		if !allowedOrigin(o) {
			h.checkLog.addDetail(2, "http: refused a cross-origin request", "origin", o)
			h.refuse(w, r, http.StatusForbidden, "forbidden_origin",
				"forbidden: requests from web pages are not accepted (Origin must be a loopback origin)", jsonrpc.CodeInvalidRequest)
			return
		}
	}
	if r.URL.Path == PathHealth {
		h.serveHealth(w, r)
		return
	}
	ident, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	if tc, _ := r.Context().Value(connKey{}).(*trackedConn); tc != nil && !tc.authed.Load() {
		tc.authed.Store(true) // the connection now keeps its slot while its requests run
	}
	if isAPI(r) {
		h.serveAPI(w, r, ident)
		return
	}
	switch r.URL.Path {
	case PathMCP, "/":
	default:
		h.reject(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "not found: the MCP endpoint is POST /mcp; health is GET /health")
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, ident)
	case http.MethodDelete:
		h.delete(w, r, ident)
	default:
		w.Header().Set("Allow", "POST, DELETE")
		h.reject(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest,
			"method not allowed: send JSON-RPC with POST (this server offers no SSE stream); DELETE ends a session")
	}
}

func (h *HTTPServer) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.reject(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "method not allowed: use GET /health")
		return
	}
	hl := h.health()
	setWriteDeadline(w, h.timeouts.write) // a client that stops reading its answers holds nothing for good
	w.Header().Set("Cache-Control", "no-store")
	// On HEAD net/http sends the headers, Content-Length included, and
	// drops the body.
	writeJSON(w, http.StatusOK, hl.AppendJSON(make([]byte, 0, 160)))
}

// health is the object GET /health answers.
func (h *HTTPServer) health() Health {
	if h.Health != nil {
		return h.Health()
	}
	return Health{Status: "ok", LastPolicyEvalMS: -1}
}

// post handles one JSON-RPC message (or an old-protocol batch).
func (h *HTTPServer) post(w http.ResponseWriter, r *http.Request, ident Identity) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.reject(w, http.StatusUnsupportedMediaType, jsonrpc.CodeInvalidRequest,
			"unsupported media type: Content-Type must be application/json")
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	w.Header().Del("Connection") // the body is in: the connection may stay
	// The body is in; the call may run longer than the read timeout, and an
	// expired read deadline would cancel the request's context.
	http.NewResponseController(w).SetReadDeadline(time.Time{})

	// The body is parsed here, once: the session gets the message.
	msg, perr := jsonrpc.ParseAny(body)
	switch {
	case perr != nil:
		writeJSON(w, http.StatusBadRequest, jsonrpc.AppendError(nil, perr.ID, perr.Err))
		return
	case msg.Batch != nil && msg.Batch.Err != nil && msg.Batch.Err.Code == jsonrpc.CodeParseError:
		writeJSON(w, http.StatusBadRequest, jsonrpc.AppendError(nil, jsonrpc.ID{},
			jsonrpc.NewError(jsonrpc.CodeParseError, "parse error: the batch is not a valid JSON array")))
		return
	}
	if mcp.IsStateless(&msg, r.Header.Get(HeaderProtocolVersion)) {
		h.postStateless(w, r, ident, &msg)
		return
	}
	sid := r.Header.Get(HeaderSessionID)
	switch {
	case sid == "" && mcp.OpensSession(&msg):
		h.startSession(w, r, &msg, ident)
		return
	case sid == "":
		h.reject(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest,
			"bad request: missing Mcp-Session-Id header; start a session with initialize and send its id with every later request")
		return
	}
	hs, ok := h.sessions.acquire(sid)
	if !ok {
		h.reject(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest,
			"session not found: it ended or expired; send initialize without Mcp-Session-Id to start a new one")
		return
	}
	defer h.sessions.release(hs)
	if hs.ident != ident {
		h.forbidSession(w, r, hs, ident)
		return
	}
	// A legacy call's progress and log messages (only those the client
	// asked for) turn the answer into an SSE stream of this POST, as
	// Streamable HTTP allows since 2025-03-26; otherwise it is JSON.
	out := &sseWriter{w: w, h: h, accepts: acceptsSSE(r), legacy: true}
	ctx := r.Context()
	if out.accepts {
		ctx = mcp.WithNotify(ctx, out.notify)
	}
	resp, err := hs.s.Handle(ctx, &msg)
	var busy *mcp.BusyError
	if errors.As(err, &busy) {
		w.Header().Set("Retry-After", "1")
		h.reject(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, busy.Error())
		return
	}
	if out.begun() {
		out.finish(resp, msg.ID)
		return
	}
	h.respond(w, resp)
}

// startSession answers an initialize sent without Mcp-Session-Id: a new
// session is created and, if initialize succeeds, kept under a fresh id
// returned in the Mcp-Session-Id header.
func (h *HTTPServer) startSession(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, ident Identity) {
	method := "bearer"
	if ident.CredentialID != "" {
		method = "credential"
	}
	caller := &chain.Caller{Transport: "http", AuthMethod: method, Kind: ident.Kind,
		CredentialID: ident.CredentialID, Subject: h.Subject}
	ms := h.Server.NewSession(caller, mcp.SessionOptions{HoldPendingCancels: true, ReplyToCancelled: true})
	hs, ok := h.sessions.create(ms, ident)
	if !ok {
		ms.Close()
		w.Header().Set("Retry-After", "1")
		h.reject(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError,
			"service unavailable: too many sessions are busy; retry, or end unused sessions with DELETE")
		return
	}
	resp, _ := ms.Handle(r.Context(), msg) // initialize takes no tools/call slot
	h.sessions.release(hs)
	if ms.ProtocolVersion() == "" { // initialize failed: keep no session
		h.sessions.remove(hs.id)
	} else {
		w.Header().Set(HeaderSessionID, hs.id)
	}
	h.respond(w, resp)
}

// readBody reads the whole body, refusing one over MaxBodyBytes with 413
// whether or not it declared its length.
func (h *HTTPServer) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	tooLarge := func() ([]byte, bool) {
		h.reject(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("request body too large: the limit is %d bytes (max_message_bytes)", h.MaxBodyBytes))
		return nil, false
	}
	if r.ContentLength > h.MaxBodyBytes {
		return tooLarge()
	}
	n := r.ContentLength
	if n < 0 || n > 64<<10 {
		n = 64 << 10 // grow as data arrives, not by what the client claims
	}
	buf := make([]byte, 0, n+1)
	body, err := readAllInto(buf, http.MaxBytesReader(w, r.Body, h.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge()
		}
		h.reject(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "bad request: reading the body failed: "+err.Error())
		return nil, false
	}
	return body, true
}

func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				return b, nil
			}
			return b, err
		}
	}
}

// delete ends a session (MCP: DELETE with Mcp-Session-Id).
func (h *HTTPServer) delete(w http.ResponseWriter, r *http.Request, ident Identity) {
	sid := r.Header.Get(HeaderSessionID)
	if sid == "" {
		h.reject(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "bad request: DELETE needs the Mcp-Session-Id header of the session to end")
		return
	}
	hs, ok := h.sessions.acquire(sid)
	if !ok {
		h.reject(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "session not found: it already ended or expired")
		return
	}
	h.sessions.release(hs)
	if hs.ident != ident {
		h.forbidSession(w, r, hs, ident)
		return
	}
	h.sessions.remove(sid)
	setWriteDeadline(w, h.timeouts.write)
	w.WriteHeader(http.StatusNoContent)
}

// respond writes a JSON-RPC response, or 202 Accepted when the body held
// only notifications or responses.
func (h *HTTPServer) respond(w http.ResponseWriter, resp []byte) {
	setWriteDeadline(w, h.timeouts.write)
	if resp == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// reject answers an HTTP-level refusal with a JSON-RPC error body (id null),
// so JSON-RPC clients can show the reason.
func (h *HTTPServer) reject(w http.ResponseWriter, status, code int, msg string) {
	setWriteDeadline(w, h.timeouts.write)
	writeJSON(w, status, jsonrpc.AppendError(nil, jsonrpc.ID{}, jsonrpc.NewError(code, msg)))
}

// setWriteDeadline bounds the writing of a response, so a client that stops
// reading cannot keep a handler (and its connection) forever.
func setWriteDeadline(w http.ResponseWriter, d time.Duration) {
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
