package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

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
// one Mcp-Session-Id on HTTP.
type Session struct {
	srv    *Server
	caller *chain.Caller
	opts   SessionOptions

	state    atomic.Int32
	mu       sync.Mutex // guards version, logLevel, client, authed
	version  string
	logLevel string
	client   string
	authed   bool // clawd/authenticate succeeded

	calls *inflight
	sem   chan struct{}

	// Stream mode: out is the writer every response and notification goes
	// through, one line each.
	outMu sync.Mutex
	out   *bufio.Writer
	outOK bool
}

// NewSession starts a session for a caller the transport has authenticated
// (caller.AuthMethod set) or not (every tools/call is then refused -32001).
func (srv *Server) NewSession(caller *chain.Caller, opts SessionOptions) *Session {
	s := &Session{
		srv:      srv,
		caller:   caller,
		opts:     opts,
		logLevel: "info",
		calls:    newInflight(opts.HoldPendingCancels),
		sem:      make(chan struct{}, srv.maxConcurrency()),
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

// ClientName returns clientInfo.name from initialize.
func (s *Session) ClientName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

func (s *Session) initialized() bool { return s.state.Load() == stateInitialized }

// push writes a server-initiated message on a stream session; on other
// sessions it is dropped (HTTP has no server push here).
func (s *Session) push(msg []byte) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.out == nil || !s.outOK {
		return
	}
	s.writeLocked(msg)
}

func (s *Session) writeLocked(msg []byte) {
	if _, err := s.out.Write(msg); err != nil {
		s.outOK = false
		return
	}
	if err := s.out.WriteByte('\n'); err != nil {
		s.outOK = false
		return
	}
	if err := s.out.Flush(); err != nil {
		s.outOK = false
	}
}

// ErrOutputClosed is returned by ServeStream when the peer stopped reading.
var ErrOutputClosed = errors.New("mcp: output closed")

// ServeStream runs the session over newline-delimited JSON: one message per
// line in, one per line out. It returns when r reaches EOF and every running
// call has answered, when the output fails, or when ctx is cancelled (which
// cancels the running calls). A malformed or oversized line is answered with
// an error and the session goes on.
func (s *Session) ServeStream(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.serveStream(ctx, r, w, nil)
}

// serveStream is ServeStream; tests pass seen to look at the stream.
func (s *Session) serveStream(ctx context.Context, r io.Reader, w io.Writer, seen func(*stream)) error {
	s.outMu.Lock()
	s.out = bufio.NewWriterSize(w, 64<<10)
	s.outOK = true
	s.outMu.Unlock()
	defer s.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		s.calls.cancelAll()
		// Unblock the read below when the reader allows it (a pollable
		// stdin, a socket); otherwise the caller must stop waiting.
		if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
			d.SetReadDeadline(time.Now())
		}
	}()
	st := newStream(s, ctx, cancel, r)
	if seen != nil {
		seen(st)
	}
	defer st.workers.close() // runs after wg.Wait: every call has finished
	defer st.wg.Wait()
	return st.serve()
}

// readLine reads one line without its newline (and a trailing CR). A line
// longer than max is consumed and reported as tooLong, holding no data.
func readLine(br *bufio.Reader, max int, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > max+2 { // +2: room for "\r\n"
				tooLong = true
				buf = buf[:0]
			} else {
				buf = append(buf, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return buf[:0], true, err
		}
		n := len(buf)
		if n > 0 && buf[n-1] == '\n' {
			n--
			if n > 0 && buf[n-1] == '\r' {
				n--
			}
		}
		return buf[:n], false, err
	}
}

// writeResponse writes one message on the stream; it reports false when the
// output has failed.
func (s *Session) writeResponse(msg []byte) bool {
	if msg == nil {
		return true
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if !s.outOK {
		return false
	}
	s.writeLocked(msg)
	return s.outOK
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// Handle processes one HTTP body (a message or, for old protocol versions,
// a batch) and returns the response, or nil when nothing is to be answered
// (notifications and responses). Tool calls run on the caller's goroutine.
func (s *Session) Handle(ctx context.Context, body []byte) []byte {
	if jsonrpc.IsBatch(body) {
		return s.handleBatch(ctx, body)
	}
	msg, perr := jsonrpc.Parse(body)
	if perr != nil {
		return jsonrpc.AppendError(nil, perr.ID, perr.Err)
	}
	return s.handleMessageSync(ctx, &msg)
}

// handleMessageSync handles any message, running tools/call inline.
func (s *Session) handleMessageSync(ctx context.Context, msg *jsonrpc.Message) []byte {
	if msg.Method == "tools/call" && !msg.IsNotification() && s.initialized() {
		cctx, done, cancelled := s.calls.register(ctx, msg.ID.Key())
		defer done()
		return s.callTool(cctx, msg, cancelled)
	}
	return s.handleMessage(ctx, msg)
}
