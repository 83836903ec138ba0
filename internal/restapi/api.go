// Package restapi is clawd's REST API for upstream MCP servers, mounted by
// the daemon on the loopback HTTP listener under /api/v1/mcp/servers. The
// transport authenticates every request first (peer, Host, Origin, bearer
// credential) and hands the caller's identity over; this package decides
// which callers may do what (authorize), validates input with the store's
// one validator, writes the table (a running daemon applies changes as it
// does those of `clawd mcp add`), asks the upstream manager for test,
// refresh and logs, and audits every change. docs/upstreams.md, "REST
// API", describes the endpoints, fields, errors and the caller rule.
package restapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/upstream"
)

// Prefix is the path of the server collection.
const Prefix = "/api/v1/mcp/servers"

// Defaults.
const (
	// DefaultMaxBody bounds a request body. A server's row is rarely over
	// a few KiB; 1 MiB leaves room for long argument lists.
	DefaultMaxBody = 1 << 20
	// DefaultTimeout bounds a request that only reads or writes the
	// table. Test and refresh are bounded by the server's own connect and
	// read timeouts instead (at most 300 s each).
	DefaultTimeout = 10 * time.Second
	writeTimeout   = 30 * time.Second
)

// Caller is who sent a request, as the transport authenticated it.
type Caller struct {
	// Entity is "<kind>:<workspace id>", the trust registry's key.
	Entity string
	Kind   string
	// CredentialID is the per-client credential presented; "" for the
	// workspace token.
	CredentialID string
	// Claimed is the entity of the kind the client said it is (a socket
	// session's clientInfo), "" when it said none. As for tool calls, a
	// claim can only take rights away: when its row exists, the caller
	// needs the level there too.
	Claimed string
}

// Upstreams is what the API asks of the daemon's upstream manager
// (*upstream.Manager).
type Upstreams interface {
	Refresh(ctx context.Context, name string) error
	Test(ctx context.Context, cfg upstream.ServerConfig) (upstream.TestResult, error)
	Logs(name string) []byte
	StatusOf(name string) (upstream.Status, bool)
}

// API serves the REST API. DB, Identify and Configs are required.
type API struct {
	DB *store.DB
	// Identify returns the caller the transport authenticated for r; ok
	// false refuses the request.
	Identify func(r *http.Request) (Caller, bool)
	// Upstreams is nil when this clawd manages no upstream servers (it
	// runs as an upstream of another clawd): test, refresh and logs then
	// answer 503.
	Upstreams Upstreams
	// Configs turns rows into the manager's configuration exactly as the
	// daemon does (daemon.UpstreamConfigs), so test tries what would run.
	Configs func([]store.MCPServer) []upstream.ServerConfig
	// Audit records changes and refusals (store.DB.Audit()); nil records
	// nothing.
	Audit  chain.AuditLog
	Logger *slog.Logger

	MaxBody int64         // default DefaultMaxBody
	Timeout time.Duration // default DefaultTimeout
	// ApplyWait is how long refresh waits for a server the daemon has not
	// picked up yet (just added); default 3 s.
	ApplyWait time.Duration
	// MaxActions bounds the tests and refreshes running at once (each may
	// start a process); more get 503. Default DefaultMaxActions.
	MaxActions int

	once    sync.Once
	actions chan struct{}
}

// DefaultMaxActions is the default of API.MaxActions.
const DefaultMaxActions = 4

// action takes a slot for a test or refresh, or refuses with 503.
func (a *API) action() (release func(), err error) {
	a.once.Do(func() {
		n := a.MaxActions
		if n <= 0 {
			n = DefaultMaxActions
		}
		a.actions = make(chan struct{}, n)
	})
	select {
	case a.actions <- struct{}{}:
		return func() { <-a.actions }, nil
	default:
		return nil, fail(http.StatusServiceUnavailable, "busy",
			"%d tests or refreshes are running already (each may start a process); retry when they are done", cap(a.actions))
	}
}

func (a *API) maxBody() int64 {
	if a.MaxBody > 0 {
		return a.MaxBody
	}
	return DefaultMaxBody
}

func (a *API) timeout() time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return DefaultTimeout
}

func (a *API) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// apiError is an answer other than success: status, a stable code and a
// message that names what was wrong and what to do.
type apiError struct {
	status  int
	code    string
	message string
	// allow is the Allow header of a 405: the methods the path takes.
	allow string
}

func (e *apiError) Error() string { return e.message }

func fail(status int, code, format string, a ...any) *apiError {
	msg := format
	if len(a) > 0 {
		msg = sprintf(format, a...)
	}
	return &apiError{status: status, code: code, message: msg}
}

// route is one endpoint: the access it needs and its handler.
type route struct {
	access access
	serve  func(ctx context.Context, rq *request) (int, any, error)
}

// request is what a handler gets.
type request struct {
	r      *http.Request
	w      http.ResponseWriter
	caller Caller
	level  int
	id     int64 // the {id} of the path, 0 for the collection
	body   []byte
}

// ServeHTTP routes a request, checks the caller's rights, reads the body
// and answers JSON. Every request is bounded in time.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	rt, id, err := a.route(r)
	if err != nil {
		a.writeError(w, err)
		return
	}
	caller, ok := Caller{}, false
	if a.Identify != nil {
		caller, ok = a.Identify(r)
	}
	if !ok {
		a.writeError(w, fail(http.StatusUnauthorized, "unauthorized", "unauthorized: no authenticated caller; send Authorization: Bearer <workspace token>"))
		return
	}
	rq := &request{r: r, w: w, caller: caller, id: id}
	if rq.level, err = a.authorize(caller, rt.access); err != nil {
		a.auditRefusal(r.Context(), rq, err) // a refused read too: every denial is on record
		a.writeError(w, err)
		return
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		if rq.body, err = a.readBody(w, r); err != nil {
			a.writeError(w, err)
			return
		}
	default:
		if r.ContentLength != 0 { // the transport closes the connection after this answer: the body stays unread
			a.writeError(w, fail(http.StatusBadRequest, "bad_body", "%s takes no body", r.Method))
			return
		}
	}
	w.Header().Del("Connection") // the body is in (or there was none): the connection may stay
	// The body is in; an expired read deadline would cancel the request's
	// context while a test or refresh legitimately runs longer.
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	ctx, cancel := context.WithTimeout(r.Context(), a.timeout())
	defer cancel()
	status, v, err := rt.serve(ctx, rq)
	if err != nil {
		a.writeError(w, a.classify(ctx, err))
		return
	}
	a.writeJSON(w, status, v)
}

// route picks the endpoint for r's method and path.
func (a *API) route(r *http.Request) (route, int64, error) {
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return route{}, 0, fail(http.StatusNotFound, "not_found",
			"not found: %s; the REST API is under %s (docs/upstreams.md)", clip(r.URL.Path, 200), Prefix)
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if rest == "" || rest == "/" {
		parts = nil
	}
	type ep = map[string]route
	var table ep
	var id int64
	switch {
	case len(parts) == 0:
		table = ep{"GET": {accessRead, a.list}, "POST": {accessChange, a.create}}
	case len(parts) == 1 && parts[0] == "refresh":
		table = ep{"POST": {accessChange, a.refreshAll}}
	default:
		n, err := strconv.ParseInt(parts[0], 10, 64)
		if err != nil || n <= 0 || strconv.FormatInt(n, 10) != parts[0] {
			return route{}, 0, fail(http.StatusNotFound, "not_found",
				"not found: %q is not a server id; ids are the positive integers GET %s lists (the built-in server clawd included)", clip(parts[0], 80), Prefix)
		}
		id = n
		switch {
		case len(parts) == 1:
			table = ep{"GET": {accessRead, a.get}, "PUT": {accessChange, a.update}, "PATCH": {accessChange, a.update},
				"DELETE": {accessChange, a.delete}}
		case len(parts) == 2 && parts[1] == "toggle":
			table = ep{"PUT": {accessChange, a.toggle}}
		case len(parts) == 2 && parts[1] == "test":
			table = ep{"POST": {accessChange, a.test}}
		case len(parts) == 2 && parts[1] == "refresh":
			table = ep{"POST": {accessChange, a.refreshOne}}
		case len(parts) == 2 && parts[1] == "logs":
			table = ep{"GET": {accessRead, a.logs}}
		default:
			return route{}, 0, fail(http.StatusNotFound, "not_found",
				"not found: %s; a server has /toggle, /test, /refresh and /logs", clip(r.URL.Path, 200))
		}
	}
	rt, ok := table[r.Method]
	if !ok {
		methods := make([]string, 0, len(table))
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if _, ok := table[m]; ok {
				methods = append(methods, m)
			}
		}
		allow := strings.Join(methods, ", ")
		return route{}, 0, &apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed", allow: allow,
			message: "method " + clip(r.Method, 20) + " not allowed on " + clip(r.URL.Path, 200) + "; use " + allow}
	}
	return rt, id, nil
}

// readBody reads a JSON body of at most MaxBody bytes.
func (a *API) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength == 0 {
		return nil, nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := strings.Cut(ct, ";")
		if !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
			return nil, fail(http.StatusUnsupportedMediaType, "unsupported_media_type",
				"unsupported media type %q: send the body as Content-Type: application/json", clip(ct, 80))
		}
	} else {
		return nil, fail(http.StatusUnsupportedMediaType, "unsupported_media_type",
			"a body needs Content-Type: application/json")
	}
	limit := a.maxBody()
	if r.ContentLength > limit {
		return nil, fail(http.StatusRequestEntityTooLarge, "body_too_large", "request body too large: the limit is %d bytes", limit)
	}
	// io.ReadAll grows its buffer as data arrives, not by what the client
	// claims; the REST API is not a hot path that would need a pool.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, fail(http.StatusRequestEntityTooLarge, "body_too_large", "request body too large: the limit is %d bytes", limit)
		}
		return nil, fail(http.StatusBadRequest, "bad_body", "reading the request body failed: %v", err)
	}
	return body, nil
}

// classify maps an error of a handler to an answer.
func (a *API) classify(ctx context.Context, err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case store.IsValidation(err):
		return fail(http.StatusBadRequest, "invalid_field", "%s", err.Error())
	case errors.Is(err, store.ErrServerNotFound):
		return fail(http.StatusNotFound, "server_not_found", "no MCP server with this id; GET %s lists them", Prefix)
	case errors.Is(err, store.ErrServerExists):
		return fail(http.StatusConflict, "name_taken", "%s; pick another name, or change the existing server with PUT %s/{id}", err.Error(), Prefix)
	case errors.Is(err, store.ErrBuiltinServer):
		return builtinRefusal()
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return fail(http.StatusGatewayTimeout, "timeout", "the request did not finish within its time limit (%v); retry, or check the server with POST %s/{id}/test", a.timeout(), Prefix)
	}
	a.logger().Error("rest api: request failed", "err", err)
	return fail(http.StatusInternalServerError, "internal", "internal error: %s (see clawd's log)", clip(err.Error(), 300))
}

func builtinRefusal() *apiError {
	return fail(http.StatusForbidden, "builtin_server",
		"the built-in server %q stands for clawd's own tools: it cannot be changed, disabled, tested or deleted; switch a built-in tool off in the [tools] section of clawd's config instead", store.BuiltinServerName)
}

func (a *API) writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = fail(http.StatusInternalServerError, "internal", "internal error: %s", clip(err.Error(), 300))
	}
	if ae.allow != "" {
		w.Header().Set("Allow", ae.allow)
	}
	a.writeJSON(w, ae.status, errorBody{Error: ae.code, Message: ae.message})
}

type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

func (a *API) writeJSON(w http.ResponseWriter, status int, v any) {
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeTimeout))
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		a.logger().Error("rest api: encoding an answer failed", "err", err)
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Error: "internal", Message: "encoding the answer failed (see clawd's log)"})
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
