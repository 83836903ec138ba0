package e2e

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

func init() {
	kinds = append(kinds, kind{name: "unix", dial: dialUnix}, kind{name: "http", dial: dialHTTP})
}

// dialUnix starts a unix-socket daemon and reaches it the way a
// stdio-only host does: the go-sdk client spawns `clawd connect`.
func dialUnix(t *testing.T, e *env, d dial) *mcp.ClientSession {
	t.Helper()
	dm, _ := e.Daemon("unix_socket")
	e.server = dm.Cmd.Process
	return sdkConnect(t, &mcp.CommandTransport{Command: e.Command("connect")}, d)
}

// dialHTTP starts a loopback HTTP daemon on a free port and connects the
// go-sdk's Streamable HTTP client with the token from the token file
// (through d.wire's recording client when set).
func dialHTTP(t *testing.T, e *env, d dial) *mcp.ClientSession {
	t.Helper()
	dm, st := e.Daemon("tcp_loopback", "--port", "0")
	e.server = dm.Cmd.Process
	tok := clawdtest.ReadToken(t, st.TokenFile)
	hc := clawdtest.BearerClient(tok)
	if d.wire != nil {
		hc = d.wire.HTTPClient(tok)
	}
	return sdkConnect(t, &mcp.StreamableClientTransport{
		Endpoint:   "http://" + st.Addr + "/mcp",
		HTTPClient: hc,
		MaxRetries: -1,
	}, d)
}
