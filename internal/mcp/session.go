package mcp

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
)

// Session states.
const (
	stateNew         int32 = iota // before initialize
	stateInitialized              // initialize answered
)

// SessionOptions adapt a session to its transport.
type SessionOptions struct {
	// HoldPendingCancels keeps a cancel for an id not yet seen for 5 s
	// (HTTP, where a cancel may overtake its call).
	HoldPendingCancels bool
	// ReplyToCancelled answers a cancelled call with an isError result
	// "cancelled" instead of no response (HTTP must answer every POST; on
	// streams MCP says a cancelled request gets no response).
	ReplyToCancelled bool
	// Authenticate, when set, lets a client present a per-client credential
	// with the request clawd/authenticate before initialize (the unix
	// socket, where `clawd connect --client KIND` sends it first). It
	// returns the kind and credential id the credential maps to, or why it
	// was refused. Nil answers clawd/authenticate with -32601.
	Authenticate func(credential string) (kind, credentialID, reason string, ok bool)
}

// Session is one MCP session: one stdio stream, one socket connection, or
// one Mcp-Session-Id on HTTP. It works on parsed messages only: a
// jsonrpc.Connection (Serve) or the message an HTTP request carried
// (Handle); the framing is the transport's.
type Session struct {
	srv    *Server
	caller *chain.Caller
	opts   SessionOptions

	state    atomic.Int32
	mu       sync.Mutex // guards version, logLevel, client, authed
	version  string
	logLevel string      // set by logging/setLevel; "" sends no log messages
	logSet   atomic.Bool // logLevel is set (read without the lock by each call)
	client   string
	authed   bool // clawd/authenticate succeeded

	calls *inflight

	// conn is the connection a served session writes its server-initiated
	// messages to (nil on HTTP).
	connMu sync.Mutex
	conn   jsonrpc.Connection

	changed coalesced // its list_changed sends (NotifyToolsChanged)

	// listenEnded: the stream's input ended and its subscriptions were
	// ended; one still starting then ends at once (guarded by
	// srv.listenMu, listen.go).
	listenEnded bool
}

// NewSession starts a session for a caller the transport has authenticated
// (caller.AuthMethod set) or not (every tools/call is then refused -32001).
func (srv *Server) NewSession(caller *chain.Caller, opts SessionOptions) *Session {
	s := &Session{
		srv:    srv,
		caller: caller,
		opts:   opts,
		calls:  newInflight(opts.HoldPendingCancels),
	}
	srv.track(s)
	return s
}

// Close ends the session: running calls are cancelled and it stops
// receiving notifications.
func (s *Session) Close() {
	s.calls.cancelAll()
	s.srv.untrack(s)
}

// Caller returns the session's caller (its entity is set at initialize).
func (s *Session) Caller() *chain.Caller { return s.caller }

// ProtocolVersion returns the negotiated version ("" before initialize).
func (s *Session) ProtocolVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// ClientName returns clientInfo.name from initialize ("" for a nil
// session: an extension serving a stateless HTTP request gets none).
func (s *Session) ClientName() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

func (s *Session) initialized() bool { return s.state.Load() == stateInitialized }

// legacyLogLevel is the level logging/setLevel set ("" when it was never
// called: no log messages then).
func (s *Session) legacyLogLevel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel
}

// baseCaller returns a copy of what the transport's credential says about
// the caller (clawd/authenticate may have changed it), for a stateless
// request to resolve with its own claim; the session's caller is left as
// initialize set it.
func (s *Session) baseCaller() chain.Caller {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := *s.caller
	c.EntityID, c.Claim, c.ClaimKind = "", "", ""
	return c
}

// push writes a server-initiated message on a session served over a
// Connection; on other sessions (HTTP, which has no server push here) it is
// dropped.
func (s *Session) push(msg []byte) {
	s.connMu.Lock()
	conn := s.conn
	s.connMu.Unlock()
	if conn != nil {
		conn.Write(context.Background(), msg)
	}
}

// canPush reports whether push has a connection to write to.
func (s *Session) canPush() bool {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return s.conn != nil
}

// ErrOutputClosed is returned by Serve when the peer stopped reading.
var ErrOutputClosed = errors.New("mcp: output closed")

// Serve runs the session over conn: it reads messages and writes every
// response and notification to conn. It returns when the input ends (io.EOF)
// and every running call has answered, when the output fails, or when ctx is
// cancelled (which cancels the running calls and closes conn to interrupt
// its Read). A message conn could not parse is answered with its error and
// the session goes on. conn is closed when Serve returns.
func (s *Session) Serve(ctx context.Context, conn jsonrpc.Connection) error {
	return s.serve(ctx, conn, nil)
}

// serve is Serve; tests pass seen to look at the stream.
func (s *Session) serve(ctx context.Context, conn jsonrpc.Connection, seen func(*stream)) error {
	s.connMu.Lock()
	s.conn = conn
	s.connMu.Unlock()
	defer s.Close()
	defer conn.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		s.calls.cancelAll()
		// Unblock the read below when the connection allows it (a pollable
		// stdin, a socket); otherwise the caller must stop waiting.
		conn.Close()
	}()
	st := newStream(s, ctx, cancel, conn)
	if seen != nil {
		seen(st)
	}
	defer st.workers.close() // runs after wg.Wait: every call has finished
	defer st.wait()
	err := st.serve()
	// The input ended: end this stream's subscriptions with their closing
	// result (wg.Wait then waits for them to be written).
	s.srv.endListeners(s, false)
	return err
}

// Handle answers one message of an HTTP body (a single message or, for old
// protocol versions, a batch, as jsonrpc.ParseAny returns them) and returns
// the response, or nil when nothing is to be answered (notifications and
// responses). Tool calls run on the caller's goroutine.
//
// Handle does not wait for a tools/call slot: when the message carries
// tools/call requests and the server's max_concurrency calls are already
// running, it answers nothing and returns a *BusyError (HTTP answers 503
// with Retry-After; the client retries).
func (s *Session) Handle(ctx context.Context, msg *jsonrpc.Message) ([]byte, error) {
	if msg.Batch != nil {
		if refused := s.batchRefusal(msg.Batch); refused != nil {
			return refused, nil
		}
		// Its calls take their slots all at once: more than there are would
		// be refused as busy on every retry.
		if n, limit := countCalls(msg), s.srv.limiter().max; n > limit {
			return jsonrpc.AppendError(nil, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
				"invalid request: this batch carries "+strconv.Itoa(n)+" tools/call requests, and over HTTP a batch's calls run at once, "+
					"at most max_concurrency ("+strconv.Itoa(limit)+"); send them in smaller batches")), nil
		}
	}
	if n := countCalls(msg); n > 0 {
		if !s.srv.limiter().tryAcquire(n) {
			return nil, &BusyError{Limit: s.srv.limiter().max}
		}
		defer s.srv.limiter().release(n)
		ctx = context.WithValue(ctx, slotsHeld{}, true)
	}
	if msg.Batch != nil {
		return s.handleBatch(ctx, msg.Batch), nil
	}
	return s.handleMessageSync(ctx, msg), nil
}

// handleMessageSync handles any message, running tools/call inline. On a
// stream (a batch's members) an extension request is registered like a
// call too, so a cancel reaches it as it does one sent alone
// (stream.handle); over HTTP its POST's context bounds it.
func (s *Session) handleMessageSync(ctx context.Context, msg *jsonrpc.Message) []byte {
	if msg.IsNotification() || msg.IsResponse {
		return s.handleMessage(ctx, msg)
	}
	if msg.Method == "tools/call" {
		cctx, done, cancelled := s.calls.register(ctx, msg.ID.Key())
		defer done()
		return s.callTool(cctx, msg, cancelled)
	}
	if !s.opts.ReplyToCancelled && s.srv.Extensions[msg.Method] != nil {
		cctx, done, cancelled := s.calls.register(ctx, msg.ID.Key())
		defer done()
		return s.extension(cctx, msg, cancelled)
	}
	return s.handleMessage(ctx, msg)
}

// OpensSession reports whether msg is a request that starts an MCP session
// (initialize). Streamable HTTP needs to know: it mints a session id for
// such a request only.
func OpensSession(msg *jsonrpc.Message) bool {
	return msg.Batch == nil && !msg.IsResponse && !msg.IsNotification() && msg.Method == "initialize"
}
