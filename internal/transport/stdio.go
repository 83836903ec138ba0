// Package transport carries MCP sessions over stdio, unix sockets and
// loopback HTTP. A transport authenticates its peer (the chain's step 1
// input) and hands bytes to an mcp.Session; it knows nothing of tools.
package transport

import (
	"context"
	"io"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/mcp"
)

// ServeStdio runs one session over the process's stdin and stdout. The
// peer is the host that spawned clawd, so step 1 passes as "spawn".
func ServeStdio(ctx context.Context, srv *mcp.Server, caller *chain.Caller, in io.Reader, out io.Writer) error {
	s := srv.NewSession(caller, mcp.SessionOptions{})
	return s.ServeStream(ctx, in, out)
}
