package mcp

import (
	"context"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
)

// handleMessage answers every message except a stream's tools/call (which
// callTool handles on its own goroutine). It returns nil for notifications
// and for responses from the peer.
func (s *Session) handleMessage(ctx context.Context, msg *jsonrpc.Message) []byte {
	if msg.IsResponse {
		return nil // clawd sends no requests; a stray response is ignored
	}
	if msg.IsNotification() {
		s.handleNotification(msg)
		return nil
	}
	if msg.Method == "server/discover" || claims(msg) {
		// The stateless path: server/discover always (it needs _meta),
		// and any request claiming a protocol version in _meta.
		return s.srv.serveStateless(ctx, s.stateless(), msg)
	}
	result, rerr := s.dispatch(ctx, msg)
	if rerr != nil {
		return jsonrpc.AppendError(nil, msg.ID, rerr)
	}
	return jsonrpc.AppendResult(nil, msg.ID, result)
}

// claims reports whether a request claims a protocol version in _meta.
func claims(msg *jsonrpc.Message) bool {
	if len(msg.Params) == 0 {
		return false
	}
	_, ok := ClaimedVersion(msg)
	return ok
}

func (s *Session) handleNotification(msg *jsonrpc.Message) {
	switch msg.Method {
	case "notifications/cancelled":
		var p struct {
			RequestID jsontext.Value `json:"requestId"`
			Reason    string         `json:"reason"`
		}
		if json.Unmarshal(msg.Params, &p) != nil || len(p.RequestID) == 0 {
			return
		}
		if k := p.RequestID.Kind(); k != '"' && k != '0' {
			return
		}
		s.calls.cancel(jsonrpc.KeyOf(p.RequestID))
	case "notifications/initialized":
		// The session is usable from the initialize response on; clients
		// that send requests before this notification are served too.
	default:
		// Other notifications (roots/list_changed, progress, ...) need no action.
	}
}

// dispatch is the method table for requests.
func (s *Session) dispatch(ctx context.Context, msg *jsonrpc.Message) (jsontext.Value, *jsonrpc.Error) {
	switch msg.Method {
	case "initialize":
		return s.initialize(msg.Params)
	case "ping":
		return jsontext.Value("{}"), nil
	case MethodAuthenticate:
		return s.authenticate(msg.Params)
	}
	if !s.initialized() {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"invalid request: the session is not initialized; send initialize first")
	}
	switch msg.Method {
	case "tools/list":
		return s.listTools()
	case "logging/setLevel":
		return s.setLogLevel(msg.Params)
	case "resources/list":
		return jsontext.Value(`{"resources":[]}`), nil
	case "resources/templates/list":
		return jsontext.Value(`{"resourceTemplates":[]}`), nil
	case "prompts/list":
		return jsontext.Value(`{"prompts":[]}`), nil
	}
	if h, ok := s.srv.Extensions[msg.Method]; ok {
		res, rerr := h(ctx, s, msg.Params)
		if rerr != nil {
			return nil, rerr
		}
		return marshalResult(res)
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: "+msg.Method)
}

// extension answers an extension request that a stream runs like a call,
// registered in the in-flight table under ctx: as for a call, one whose
// cancel was processed before its answer was committed is not answered
// (a stream answers a cancelled request with nothing), and one registered
// already cancelled (the session is ending) is not run at all: an
// extension may act (clawd/api changes the upstream table).
func (s *Session) extension(ctx context.Context, msg *jsonrpc.Message, cancelled bool) []byte {
	if cancelled {
		return nil
	}
	out := s.handleMessage(ctx, msg)
	if !s.calls.commit(msg.ID.Key(), ctx) {
		return nil
	}
	return out
}

func marshalResult(v any) (jsontext.Value, *jsonrpc.Error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "internal error: cannot encode the result")
	}
	return b, nil
}

type implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initializeParams struct {
	ProtocolVersion *string        `json:"protocolVersion"`
	Capabilities    jsontext.Value `json:"capabilities"`
	ClientInfo      *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitzero"`
}

func (s *Session) initialize(params jsontext.Value) (jsontext.Value, *jsonrpc.Error) {
	var p initializeParams
	if err := json.Unmarshal(orEmpty(params), &p); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+err.Error())
	}
	if p.ProtocolVersion == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid params: "protocolVersion" is required`)
	}
	version := *p.ProtocolVersion
	if !IsSupportedVersion(version) {
		version = LatestVersion
	}
	client := ""
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name
	}
	s.mu.Lock()
	if s.state.Load() != stateNew {
		s.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: the session is already initialized")
	}
	s.version = version
	s.client = client
	s.caller.Resolve(client)
	// Published last: a call that sees the session initialized (it reads
	// the caller without the lock) sees the caller resolved.
	s.state.Store(stateInitialized)
	s.mu.Unlock()
	return marshalResult(&initializeResult{
		ProtocolVersion: version,
		Capabilities: map[string]any{
			"tools":   map[string]any{"listChanged": true},
			"logging": map[string]any{},
		},
		ServerInfo:   implementation{Name: ServerName, Version: s.srv.Version},
		Instructions: s.srv.Instructions,
	})
}

var logLevels = map[string]bool{
	"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true,
}

func (s *Session) setLogLevel(params jsontext.Value) (jsontext.Value, *jsonrpc.Error) {
	var p struct {
		Level string `json:"level"`
	}
	if err := json.Unmarshal(orEmpty(params), &p); err != nil || !logLevels[p.Level] {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			`invalid params: "level" must be one of debug, info, notice, warning, error, critical, alert, emergency`)
	}
	s.mu.Lock()
	s.logLevel = p.Level
	s.mu.Unlock()
	s.logSet.Store(true)
	return jsontext.Value("{}"), nil
}

func orEmpty(v jsontext.Value) jsontext.Value {
	if len(v) == 0 {
		return jsontext.Value("{}")
	}
	return v
}

// handleBatch answers a JSON array of messages. Batches exist in protocol
// versions before 2025-06-18 only; later sessions (and sessions not yet
// initialized, since initialize may not be batched) get -32600.
func (s *Session) handleBatch(ctx context.Context, b *jsonrpc.Batch) []byte {
	if refused := s.batchRefusal(b); refused != nil {
		return refused
	}
	out := make([][]byte, len(b.Items))
	var wg sync.WaitGroup
	for i := range b.Items {
		it := &b.Items[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if it.Err != nil {
				out[i] = jsonrpc.AppendError(nil, it.Err.ID, it.Err.Err)
				return
			}
			if it.Msg.Method == "initialize" {
				out[i] = jsonrpc.AppendError(nil, it.Msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "invalid request: initialize must not be part of a batch"))
				return
			}
			if claims(&it.Msg) {
				// Not served here: a subscriptions/listen would hold the
				// batch's answer until the input ended, out of reach of
				// cancellation and the per-connection subscription cap.
				out[i] = jsonrpc.AppendError(nil, it.Msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
					"invalid request: a request claiming a protocol version in _meta must not be part of a batch; JSON-RPC batches are not part of protocol version "+ModernVersions[0]))
				return
			}
			out[i] = s.handleMessageSync(ctx, &it.Msg)
		}()
	}
	wg.Wait()
	resp := []byte{'['}
	for _, r := range out {
		if r == nil {
			continue
		}
		if len(resp) > 1 {
			resp = append(resp, ',')
		}
		resp = append(resp, r...)
	}
	if len(resp) == 1 {
		return nil // only notifications
	}
	return append(resp, ']')
}

// batchRefusal is the answer to a batch refused whole (batches not
// allowed in the session's protocol version, not a valid batch, too many
// messages), or nil when its messages are to be handled. Session.Handle
// asks it before taking the batch's tools/call slots, so a refused batch
// gets this answer and not a busy refusal.
func (s *Session) batchRefusal(b *jsonrpc.Batch) []byte {
	v := s.ProtocolVersion()
	if v == "" || v >= "2025-06-18" {
		return jsonrpc.AppendError(nil, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"invalid request: JSON-RPC batches are not supported in protocol version "+orWord(v, "(not initialized)")))
	}
	if b.Err != nil {
		return jsonrpc.AppendError(nil, jsonrpc.ID{}, b.Err)
	}
	if b.Len > maxBatchItems || len(b.Items) > maxBatchItems {
		return jsonrpc.AppendError(nil, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"invalid request: a batch may carry at most "+strconv.Itoa(maxBatchItems)+" messages, this one has "+
				strconv.Itoa(max(b.Len, len(b.Items)))+"; send them in smaller batches"))
	}
	return nil
}

func orWord(v, w string) string {
	if v == "" {
		return w
	}
	return v
}
