// Package transport carries MCP sessions over stdio, unix sockets and
// loopback HTTP. A transport authenticates its peer (the chain's step 1
// input), owns the framing (lines through jsonrpc.Stream, HTTP bodies) and
// hands parsed messages to an mcp.Session; it knows nothing of tools. The
// MCP rules it applies are HTTP's, and internal/mcp decides each from the
// parsed message: a session id is minted for initialize only
// (mcp.OpensSession); a request that claims a protocol version in _meta
// (mcp.ClaimedVersion) is served without a session, after its
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers are compared with
// what mcp.HeaderValues says the body implies (http_stateless.go).
package transport

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/support/rawio"
)

// ServeStdio runs one session over in and out. The peer is the host that
// spawned clawd, so step 1 passes as "spawn". When out takes write
// deadlines (a pipe in the network poller, a socket), a client that leaves
// an answer unread for DefaultWriteStall ends the session with an error
// saying so. Once in has ended, a host that is gone altogether (out has no
// reader left) cancels the running calls (cancelOnHangup).
func ServeStdio(ctx context.Context, srv *mcp.Server, caller *chain.Caller, in io.Reader, out io.Writer) error {
	s := srv.NewSession(caller, mcp.SessionOptions{})
	end := serveStream(ctx, s, in, out, srv.MessageLimit(), DefaultWriteStall)
	if end.stalled {
		return fmt.Errorf("the client left an answer unread for %v; session closed", DefaultWriteStall)
	}
	if end.gone {
		return nil // the host went away: the session is over, not failed
	}
	return end.err
}

// DefaultWriteStall is how long a stream client (stdio, the unix socket)
// may leave an answer unread before clawd ends its session. A client
// reads its answers as they come; one that stops (hung, or sending calls
// without reading) would otherwise hold the session's goroutines and every
// answer they carry for as long as it lives.
const DefaultWriteStall = time.Minute

// orDefault is d, or def when d is not set.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// ServeProcessStdio runs one session over the process's own stdin and
// stdout, reading stdin through the network poller where it can. When ctx
// ends (SIGTERM) running calls are cancelled; if stdin cannot be interrupted
// (a terminal or a regular file), it returns after stdioShutdownGrace without
// waiting for the read, which dies with the process.
func ServeProcessStdio(ctx context.Context, srv *mcp.Server, caller *chain.Caller) error {
	in, restore := pollableStdin()
	defer restore()
	out, restoreOut := pollableStdout()
	defer restoreOut()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, srv, caller, rawio.New(in), rawio.New(out)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	select {
	case err := <-done:
		return err
	case <-time.After(stdioShutdownGrace):
		return ctx.Err()
	}
}

// stdioShutdownGrace is how long a stopping stdio session may take to let its
// cancelled calls answer.
const stdioShutdownGrace = 3 * time.Second
