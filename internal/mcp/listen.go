package mcp

import (
	"context"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
)

// subscriptions/listen (2026-07-28): a long-lived request whose answer is
// a stream of the change notifications the client opted in to. clawd
// offers one kind, notifications/tools/list_changed (toolsListChanged);
// the registry's debounced change events (listchanged.go) feed it. The
// acknowledgement goes out first, and every notification of the
// subscription carries its id in _meta. The subscription ends when the
// client cancels it (notifications/cancelled on a stream, closing the
// response on HTTP: no answer then), or when clawd ends it (the stream's
// input ended, shutdown: the closing result, resultType complete with the
// subscription id).

// listener is one open subscription.
type listener struct {
	id     jsonrpc.ID
	tools  bool
	notify func([]byte)
	owner  *Session // the stream session it was opened on; nil on HTTP
	end    chan struct{}

	mu      sync.Mutex // orders the acknowledgement before every notification
	endOnce sync.Once
	changed coalesced // its list_changed sends (notifyListeners)
}

// maxListeners bounds the open subscriptions of a server (each holds a
// goroutine; on HTTP also a connection, which the connection cap bounds
// too): a client opening them in a loop gets an error, not all the memory.
const maxListeners = 1024

// maxStreamListeners bounds the open subscriptions of one stream
// connection (stdio, the unix socket), so that one client of a daemon
// cannot hold every one of maxListeners. A client needs one: clawd offers
// one kind of notification.
const maxStreamListeners = 16

func (l *listener) stop() { l.endOnce.Do(func() { close(l.end) }) }

// send writes a notification of this subscription.
func (l *listener) send(method string, params map[string]any) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]jsontext.Value{MetaSubscriptionID: jsontext.Value(l.id.Raw())}
	msg, err := jsonrpc.AppendNotification(nil, method, params)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notify(msg)
}

// listen serves one subscriptions/listen until it ends; it returns the
// closing result, or nil when the client cancelled it.
func (srv *Server) listen(ctx context.Context, st *Stateless, msg *jsonrpc.Message) []byte {
	var p struct {
		Notifications *struct {
			ToolsListChanged bool `json:"toolsListChanged"`
		} `json:"notifications"`
	}
	if err := json.Unmarshal(orEmpty(msg.Params), &p); err != nil || p.Notifications == nil {
		return jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			`invalid params: subscriptions/listen needs "notifications", an object such as {"toolsListChanged": true}`))
	}
	if st.Notify == nil {
		return jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"internal error: this channel cannot carry notifications"))
	}
	l := &listener{id: msg.ID, tools: p.Notifications.ToolsListChanged, notify: st.Notify, owner: st.session, end: make(chan struct{})}
	// Hold the listener's lock from registration to the acknowledgement:
	// a change event in between waits, so the acknowledgement is first.
	l.mu.Lock()
	if !srv.addListener(l) {
		l.mu.Unlock()
		return jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"internal error: too many open subscriptions ("+strconv.Itoa(maxListeners)+"); cancel one first"))
	}
	ack := map[string]any{}
	if l.tools {
		ack["toolsListChanged"] = true
	}
	b, _ := jsonrpc.AppendNotification(nil, "notifications/subscriptions/acknowledged", map[string]any{
		"notifications": ack,
		"_meta":         map[string]jsontext.Value{MetaSubscriptionID: jsontext.Value(msg.ID.Raw())},
	})
	if st.Listening != nil {
		st.Listening() // before the acknowledgement: a client that has it sees the mark set
	}
	l.notify(b)
	l.mu.Unlock()
	defer srv.removeListener(l)
	var cancelled bool
	select {
	case <-ctx.Done():
		cancelled = true
	case <-l.end:
	}
	// No notification of it after this, not even one already on its way.
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notify = func([]byte) {}
	if cancelled {
		return nil // MCP sends nothing more for a cancelled request
	}
	res := `{"resultType":"complete","_meta":{"` + MetaSubscriptionID + `":` + msg.ID.Raw() + `}}`
	return jsonrpc.AppendResult(nil, msg.ID, []byte(res))
}

func (srv *Server) addListener(l *listener) bool {
	srv.watchOnce.Do(srv.watchRegistry)
	srv.listenMu.Lock()
	defer srv.listenMu.Unlock()
	if len(srv.listeners) >= maxListeners {
		return false
	}
	if srv.listeners == nil {
		srv.listeners = map[*listener]struct{}{}
	}
	srv.listeners[l] = struct{}{}
	if srv.listenEnded || (l.owner != nil && l.owner.listenEnded) {
		// Its end came while it was starting (a stream's input ended
		// right after the request was read): ended now, it answers with
		// its closing result after the acknowledgement instead of
		// waiting for an end that was already announced.
		l.stop()
	}
	return true
}

func (srv *Server) removeListener(l *listener) {
	srv.listenMu.Lock()
	delete(srv.listeners, l)
	srv.listenMu.Unlock()
}

// EndSubscriptions ends every open subscriptions/listen gracefully: each
// is answered with its closing result. The HTTP transport calls it on
// shutdown; a stream session ends its own when its input ends.
func (srv *Server) EndSubscriptions() { srv.endListeners(nil, true) }

// endListeners stops the listeners opened on owner (all when all is set),
// and those that register later (addListener).
func (srv *Server) endListeners(owner *Session, all bool) {
	srv.listenMu.Lock()
	defer srv.listenMu.Unlock()
	if all {
		srv.listenEnded = true
	} else if owner != nil {
		owner.listenEnded = true
	}
	for l := range srv.listeners {
		if all || l.owner == owner {
			l.stop()
		}
	}
}

// notifyListeners sends a tagged list_changed to every subscription that
// asked for it, each on its own goroutine (coalesced), so a client that
// stopped reading holds up only its own.
func (srv *Server) notifyListeners() {
	srv.listenMu.Lock()
	list := make([]*listener, 0, len(srv.listeners))
	for l := range srv.listeners {
		if l.tools {
			list = append(list, l)
		}
	}
	srv.listenMu.Unlock()
	for _, l := range list {
		l.changed.run(func() { l.send("notifications/tools/list_changed", nil) })
	}
}
