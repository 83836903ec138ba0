package mcp

import (
	"context"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
)

// The stateless (2026-07-28) request handler. Each request stands alone:
// its version, capabilities, identity claim and log level come from its own
// _meta, never from an earlier request on the same connection. What the
// transport proved (the credential's kind) still decides the entity; the
// claimed clientInfo.name is only recorded and can only lower trust, as
// initialize's clientInfo does (chain.Caller.Resolve).

// Cache hints of the modern results (docs/transports.md, "Protocol
// revisions"): the tool list may change without a notification when trust
// or policy is edited, so it is fresh for a minute; discovery changes only
// with a new daemon.
const (
	toolsListTTLMs = 60_000
	discoverTTLMs  = 3_600_000
)

// removedMethods are the methods the 2026-07-28 revision removed; a
// request claiming that revision gets -32601 for them.
var removedMethods = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

// modernMeta is a validated modern request's _meta.
type modernMeta struct {
	version  string
	client   string // clientInfo.name, the claim
	logLevel string // "" when the request asked for no log messages
	progress jsontext.Value
}

// validate checks the required _meta members of a request that claims
// version (claimed false: it claims none, which a modern request must).
func validateMeta(m *requestMeta, version string, claimed bool) (modernMeta, *jsonrpc.Error) {
	invalid := func(msg string) (modernMeta, *jsonrpc.Error) {
		return modernMeta{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+msg)
	}
	if !claimed && m.ProtocolVersion.Kind() == '"' {
		var legacy string
		json.Unmarshal(m.ProtocolVersion, &legacy)
		return modernMeta{}, unsupportedVersion(legacy) // a legacy version: initialize negotiates those
	}
	if !claimed {
		return invalid(`_meta must carry "` + MetaProtocolVersion + `" (and "` + MetaClientCapabilities + `") on every request of protocol version ` + ModernVersions[0])
	}
	if m.ProtocolVersion.Kind() != '"' {
		return invalid(`_meta "` + MetaProtocolVersion + `" must be a string such as "` + ModernVersions[0] + `"`)
	}
	if !IsModernVersion(version) {
		return modernMeta{}, unsupportedVersion(version)
	}
	if m.ClientCapabilities.Kind() != '{' {
		return invalid(`_meta "` + MetaClientCapabilities + `" is required and must be an object ({} declares none)`)
	}
	out := modernMeta{version: version, progress: m.ProgressToken}
	if len(m.ClientInfo) > 0 {
		var ci struct {
			Name *string `json:"name"`
		}
		if m.ClientInfo.Kind() != '{' || json.Unmarshal(m.ClientInfo, &ci) != nil || ci.Name == nil {
			return invalid(`_meta "` + MetaClientInfo + `" must be an object with a string "name"`)
		}
		out.client = *ci.Name
	}
	if len(m.LogLevel) > 0 {
		var lv string
		if m.LogLevel.Kind() != '"' || json.Unmarshal(m.LogLevel, &lv) != nil || levelRank[lv] == 0 {
			return invalid(`_meta "` + MetaLogLevel + `" must be one of debug, info, notice, warning, error, critical, alert, emergency`)
		}
		out.logLevel = lv
	}
	if k := m.ProgressToken.Kind(); len(m.ProgressToken) > 0 && k != '"' && k != '0' {
		return invalid(`_meta "progressToken" must be a string or an integer`)
	}
	return out, nil
}

// Stateless is where a stateless request is answered: the caller the
// transport authenticated, the inflight table its cancellation is matched
// in, and the function that writes the notifications preceding its answer
// (progress, log messages, a subscription's notifications; nil drops them).
type Stateless struct {
	Caller chain.Caller
	Notify func(msg []byte)
	// ReplyToCancelled answers a cancelled call with an isError result
	// (Streamable HTTP answers every POST it can); streams send nothing.
	ReplyToCancelled bool
	// Listening, if set, is called once the request has become an open
	// subscription (subscriptions/listen, just before its acknowledgement): a
	// request that runs until the client ends it. The HTTP transport lets
	// such a request's connection give way at its connection cap.
	Listening func()

	calls   *inflight
	session *Session // the stream session, for extensions; nil on HTTP
}

// HandleStateless answers one message of a Streamable HTTP request served
// without a session: a request claiming a modern version (ClaimedVersion),
// or one whose MCP-Protocol-Version header named a version that is not a
// legacy one (the request must then claim it in _meta, or gets -32602). It
// returns the response, or nil for a notification (Streamable HTTP answers
// 202; a notifications/cancelled has nothing to match without a session
// and is dropped: closing the request's stream cancels it instead). A
// tools/call beyond max_concurrency gets a *BusyError, as Handle's do; a
// subscriptions/listen runs until ctx ends (nil: the client went away) or
// the server ends subscriptions (the closing result).
func (srv *Server) HandleStateless(ctx context.Context, st *Stateless, msg *jsonrpc.Message) ([]byte, error) {
	if msg.Batch != nil {
		return jsonrpc.AppendError(nil, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"invalid request: JSON-RPC batches are not part of protocol version "+ModernVersions[0])), nil
	}
	if msg.IsResponse || msg.IsNotification() {
		return nil, nil
	}
	if msg.Method == "tools/call" {
		if !srv.limiter().tryAcquire(1) {
			return nil, &BusyError{Limit: srv.limiter().max}
		}
		defer srv.limiter().release(1)
		ctx = context.WithValue(ctx, slotsHeld{}, true)
	}
	own := *st // st may be shared by concurrent requests; this one's table is its own
	own.calls = newInflight(false)
	own.session = nil
	cctx, done, _ := own.calls.register(ctx, msg.ID.Key())
	defer done()
	return srv.serveStateless(cctx, &own, msg), nil
}

// serveStateless answers a request of the modern path.
func (srv *Server) serveStateless(ctx context.Context, st *Stateless, msg *jsonrpc.Message) []byte {
	if len(msg.Params) > 0 && msg.Params.Kind() != '{' {
		return jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: params must be an object carrying _meta"))
	}
	var p callParams
	meta := paramsMeta(msg.Params)
	if msg.Method == "tools/call" {
		if err := json.Unmarshal(orEmpty(msg.Params), &p); err != nil {
			return jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+err.Error()))
		}
		meta = p.Meta
	}
	m, _ := decodeMeta(meta)
	v, claimed := m.claim()
	mm, rerr := validateMeta(&m, v, claimed)
	if rerr != nil {
		return jsonrpc.AppendError(nil, msg.ID, rerr)
	}
	caller := st.Caller
	caller.Resolve(mm.client)
	switch msg.Method {
	case "tools/call":
		own, ok := srv.acquireCall(ctx)
		if !ok {
			return cancelledAnswer(msg.ID, st.ReplyToCancelled, true)
		}
		defer srv.releaseCall(own)
		rep := newReporter(mm.progress, mm.logLevel, st.Notify)
		x := exchange{caller: &caller, calls: st.calls, replyCancelled: st.ReplyToCancelled, modern: true}
		return srv.runCall(ctx, x, msg, &p, rep)
	case "subscriptions/listen":
		return srv.listen(ctx, st, msg)
	}
	res, rerr := srv.statelessMethod(ctx, st, &caller, &mm, msg)
	if rerr != nil {
		return jsonrpc.AppendError(nil, msg.ID, rerr)
	}
	return jsonrpc.AppendResult(nil, msg.ID, complete(res))
}

// statelessMethod is the modern method table (tools/call and
// subscriptions/listen aside).
func (srv *Server) statelessMethod(ctx context.Context, st *Stateless, caller *chain.Caller, mm *modernMeta, msg *jsonrpc.Message) (jsontext.Value, *jsonrpc.Error) {
	switch msg.Method {
	case "server/discover":
		return srv.discover()
	case "tools/list":
		return srv.listToolsModern(caller)
	case MethodAuthenticate:
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+MethodAuthenticate+
			" binds a credential to a connection, which protocol version "+ModernVersions[0]+" has not; send it without _meta (it then applies to every request on the connection)")
	}
	if removedMethods[msg.Method] {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+msg.Method+
			" is not part of protocol version "+ModernVersions[0]+" (use server/discover; a log level goes in _meta)")
	}
	if h, ok := srv.Extensions[msg.Method]; ok {
		res, rerr := h(ctx, st.requestSession(caller, mm), msg.Params)
		if rerr != nil {
			return nil, rerr
		}
		return marshalResult(res)
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+msg.Method)
}

// complete makes a result object a 2026-07-28 result: "resultType" first.
func complete(res jsontext.Value) jsontext.Value {
	t := strings.TrimLeft(string(res), " \t\r\n")
	if len(t) < 2 || t[0] != '{' {
		return res // not an object: cannot happen for clawd's own results
	}
	rest := strings.TrimLeft(t[1:], " \t\r\n")
	out := make([]byte, 0, len(t)+26)
	out = append(out, `{"resultType":"complete"`...)
	if rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// discover is server/discover's result (without resultType).
func (srv *Server) discover() (jsontext.Value, *jsonrpc.Error) {
	return marshalResult(struct {
		SupportedVersions []string       `json:"supportedVersions"`
		Capabilities      map[string]any `json:"capabilities"`
		Instructions      string         `json:"instructions,omitzero"`
		TTLMs             int            `json:"ttlMs"`
		CacheScope        string         `json:"cacheScope"`
		Meta              map[string]any `json:"_meta"`
	}{
		SupportedVersions: AllVersions(),
		Capabilities:      modernCapabilities(),
		Instructions:      srv.Instructions,
		TTLMs:             discoverTTLMs,
		CacheScope:        "private",
		Meta:              map[string]any{MetaServerInfo: implementation{Name: ServerName, Version: srv.Version}},
	})
}

// modernCapabilities are what clawd serves under 2026-07-28: tools, with
// list-change notifications through subscriptions/listen, and log messages
// a request may ask for with _meta logLevel. No resources and no prompts
// (their list methods are -32601 there).
func modernCapabilities() map[string]any {
	return map[string]any{
		"tools":   map[string]any{"listChanged": true},
		"logging": map[string]any{},
	}
}

// listToolsModern is tools/list under 2026-07-28: the tools the caller's
// entity may see, sorted by name, with cache hints. The list depends on
// the request's authorization context (the credential's entity, lowered by
// the claim this request makes) and never on the connection or on an
// earlier request; cacheScope "private" keeps a cache from sharing it
// across credentials.
func (srv *Server) listToolsModern(caller *chain.Caller) (jsontext.Value, *jsonrpc.Error) {
	visible := srv.VisibleTools(caller)
	list := make([]toolJSON, 0, len(visible))
	for _, e := range visible {
		list = append(list, describe(e.Tool.Spec()))
	}
	slices.SortFunc(list, func(a, b toolJSON) int { return strings.Compare(a.Name, b.Name) })
	return marshalResult(struct {
		Tools      []toolJSON `json:"tools"`
		TTLMs      int        `json:"ttlMs"`
		CacheScope string     `json:"cacheScope"`
	}{list, toolsListTTLMs, "private"})
}

// modernCall serves a tools/call claiming a protocol version on a stream
// or HTTP session: statelessly, with the session's connection as its
// channel (a cancel on the same stream finds it in the session's table).
func (s *Session) modernCall(ctx context.Context, msg *jsonrpc.Message, p *callParams, m *requestMeta, v string) []byte {
	mm, rerr := validateMeta(m, v, true)
	if rerr != nil {
		return jsonrpc.AppendError(nil, msg.ID, rerr)
	}
	caller := s.baseCaller()
	caller.Resolve(mm.client)
	rep := newReporter(mm.progress, mm.logLevel, s.push)
	x := exchange{caller: &caller, calls: s.calls, replyCancelled: s.opts.ReplyToCancelled, modern: true}
	return s.srv.runCall(ctx, x, msg, p, rep)
}

// requestSession is the session an extension serving a stateless request
// is given: none on Streamable HTTP, else a view of the stream's session
// carrying this request's own caller (the credential resolved with the
// request's claim, which can only lower it), claim and version. An
// extension that decides on s.Caller() (clawd/api) thus decides as a
// modern tools/call is authorized, never on what initialize claimed for
// the connection. The view serves Caller, ClientName and ProtocolVersion;
// it is not a session to serve or close.
func (st *Stateless) requestSession(caller *chain.Caller, mm *modernMeta) *Session {
	if st.session == nil {
		return nil
	}
	v := &Session{srv: st.session.srv, caller: caller, opts: st.session.opts, version: mm.version, client: mm.client, calls: newInflight(false)}
	v.state.Store(stateInitialized)
	return v
}

// stateless returns the Stateless of a request read by this session.
func (s *Session) stateless() *Stateless {
	return &Stateless{Caller: s.baseCaller(), Notify: s.push, ReplyToCancelled: s.opts.ReplyToCancelled, calls: s.calls, session: s}
}
