package transport

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/support/peercred"
)

// ErrAlreadyRunning reports that another daemon serves the socket path.
var ErrAlreadyRunning = errors.New("already running")

// DefaultMaxConns caps the open connections of a listener, so a runaway
// local client cannot exhaust the daemon's file descriptors.
const DefaultMaxConns = 128

// UnixServer serves MCP over a unix socket: newline-delimited JSON-RPC, one
// MCP session per connection. Step 1 of the chain (auth) is the kernel's
// word on the peer's uid (SO_PEERCRED / LOCAL_PEERCRED): a peer running as
// another user is disconnected before it can send anything, whatever the
// socket file's mode. The entity kind is Kind (the configured
// default_client_kind), unless the client presents a per-client credential
// with clawd/authenticate before initialize; what the client calls itself
// never raises it (docs/security.md).
//
// At MaxConns open connections a new one is still admitted if a connection
// can give way: one that has sent no complete line within firstLineWait
// of connecting and has no unread input waiting, the one connected longest
// first. A client that sends its first message at once is never shed, and
// a session that has sent a line keeps its slot for good (an agent may
// idle for hours between calls). With nothing to shed, the new connection
// is closed. Refused and shed connections are logged as a summary line at
// most every 10 s, not a line each.
type UnixServer struct {
	Server  *mcp.Server
	Subject string // the workspace id (the entity id's second half)
	// Kind is the entity kind of a peer that presents no credential
	// (default "local", as default_client_kind's default).
	Kind string
	// LiveKind, if set, is asked for that kind at each new connection
	// instead of Kind: default_client_kind applies to connections made
	// after a config reload, as it does to HTTP requests.
	LiveKind func() string
	// Auth checks a credential presented with clawd/authenticate; nil
	// refuses every one.
	Auth Authenticator
	// Audit, if set, records each clawd/authenticate refused for a
	// per-client credential whose secret matched (revoked, or issued for
	// another workspace) as a Deny row at step auth, as HTTPServer.Audit
	// does for such a credential's requests.
	Audit    chain.AuditLog
	Logger   *slog.Logger
	MaxConns int // default DefaultMaxConns
	// uid is the uid a peer must have; tests leave it zero to mean "ours".
	uid int
	// firstLineWait: default DefaultFirstLineWait; connLogEvery: default
	// connLogInterval; writeStall: default DefaultWriteStall. Tests shorten
	// them.
	firstLineWait, connLogEvery, writeStall time.Duration
}

// DefaultFirstLineWait is how long a socket connection may go without
// sending a complete line before it can be shed to make room at the cap.
// A client sends initialize at once, and its line is either read (the
// connection is then kept for good) or waiting unread in the socket (kept
// too), so the wait only has to cover the moment between the reader
// taking the bytes and marking the connection; a second is ample.
// `clawd connect` connects before its host writes anything: a host that
// takes longer than this to send initialize can lose the connection, but
// only while 128 others are open.
const DefaultFirstLineWait = time.Second

func (u *UnixServer) logger() *slog.Logger {
	if u.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return u.Logger
}

// Serve accepts connections until ctx ends or the listener fails. On return
// the listener is closed and every connection has ended: their reading side
// is shut, running calls are cancelled and their sessions closed.
func (u *UnixServer) Serve(ctx context.Context, ln net.Listener) error {
	max := u.MaxConns
	if max <= 0 {
		max = DefaultMaxConns
	}
	want := u.uid
	if want == 0 {
		want = os.Geteuid()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	table := u.connTable(max)
	clog := newConnLog(u.logger(), u.connLogEvery,
		"unix socket: too many open connections: connections refused or closed since the last report",
		[]any{"max_conns", max}, "refused", "shed_silent")
	defer clog.stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	backoff := acceptBackoff{log: u.logger()}
	for {
		c, err := ln.Accept()
		if err != nil {
			if backoff.wait(err, ctx.Done()) {
				continue
			}
			if ctx.Err() != nil { // Serve closed ln when ctx ended
				return nil
			}
			return err
		}
		backoff.reset()
		uc, ok := c.(*net.UnixConn)
		if !ok {
			c.Close()
			continue
		}
		tc, shed, ok := table.admit(uc)
		if shed > 0 {
			clog.add(1)
		}
		if !ok {
			clog.add(0)
			uc.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			u.serveConn(ctx, tc, uc, want)
		}()
	}
}

// authenticate checks a credential presented with clawd/authenticate. Only
// per-client credentials are taken: the workspace token proves no more than
// the peer's uid already did.
func (u *UnixServer) authenticate(credential string) (kind, id, reason string, ok bool) {
	if u.Auth == nil {
		return "", "", "no_credentials_configured", false
	}
	ident, reason, ok := u.Auth.Authenticate(credential)
	if ok && ident.CredentialID == "" {
		return "", "", "not_a_client_credential", false
	}
	if !ok {
		if reason == "" {
			reason = "invalid_credential"
		}
		if ident.CredentialID != "" && u.Audit != nil {
			// Its secret matched: the refusal is that credential's, on
			// record as over HTTP. Nobody's credential leaves no row.
			if _, err := u.Audit.Record(refusalRecord("unix", mcp.MethodAuthenticate, u.Subject, ident, reason)); err != nil {
				u.logger().Error("unix socket: writing the audit row of a refused credential failed",
					"credential", ident.CredentialID, "reason", reason, "err", err)
			}
		}
		return "", "", reason, false
	}
	return ident.Kind, ident.CredentialID, "", true
}

// connTable is the socket's connection table: at the cap, a connection
// that has sent no complete line within firstLineWait of its accept gives
// way, unless input is waiting unread on it (its reader has yet to run: the
// client has sent its message).
func (u *UnixServer) connTable(max int) *connTable {
	wait := u.firstLineWait
	if wait <= 0 {
		wait = DefaultFirstLineWait
	}
	t := newConnTable(max, func(c *trackedConn, st int32, now int64) int {
		if st != connIdle || now-monoOf(c.accepted) < int64(wait) {
			return 0
		}
		return 1
	})
	t.spare = func(c *trackedConn) bool { return inputPending(c.Conn) }
	return t
}

// lineWatch reads a socket connection for the session and marks it busy
// (never shed) at its first complete line.
type lineWatch struct{ c *trackedConn }

// SetReadDeadline lets the session interrupt a blocked read (jsonrpc.Stream
// Close) when it ends from the writing side.
func (w lineWatch) SetReadDeadline(t time.Time) error { return w.c.Conn.SetReadDeadline(t) }

func (w lineWatch) Read(p []byte) (int, error) {
	n, err := w.c.Conn.Read(p)
	if n > 0 && w.c.state.Load() == connIdle && bytes.IndexByte(p[:n], '\n') >= 0 {
		w.c.busy()
	}
	return n, err
}

func (u *UnixServer) serveConn(ctx context.Context, tc *trackedConn, c *net.UnixConn, wantUID int) {
	defer tc.Close()
	uid, pid, err := peercred.Of(c)
	if err != nil {
		u.logger().Warn("unix socket: connection closed, peer credentials unavailable", "err", err)
		return
	}
	if uid != wantUID {
		u.logger().Warn("unix socket: connection refused, peer runs as another user",
			"peer_uid", uid, "peer_pid", pid, "daemon_uid", wantUID)
		return
	}
	u.logger().Debug("unix socket: peer connected", "peer_pid", pid)
	kind := u.Kind
	if u.LiveKind != nil {
		kind = u.LiveKind()
	}
	if kind == "" {
		kind = "local"
	}
	caller := &chain.Caller{Transport: "unix", AuthMethod: "peercred", Kind: kind, Subject: u.Subject}
	s := u.Server.NewSession(caller, mcp.SessionOptions{Authenticate: u.authenticate})

	// On shutdown, shut the reading side: the session sees EOF, its calls
	// are cancelled through ctx, and Serve returns.
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			c.CloseRead()
		case <-done:
		}
	}()
	// A client that closed its socket (not only its writing side) after
	// its last request reads no answer: its running calls are cancelled.
	stall := orDefault(u.writeStall, DefaultWriteStall)
	end := serveStream(ctx, s, lineWatch{tc}, c, u.Server.MessageLimit(), stall)
	if end.stalled {
		u.logger().Warn("unix socket: connection closed, the client stopped reading its answers",
			"peer_pid", pid, "waited", stall)
	} else if err := end.err; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, mcp.ErrOutputClosed) {
		u.logger().Debug("unix socket: session ended", "peer_pid", pid, "err", err)
	}
}
