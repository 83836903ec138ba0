package e2e

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

func init() {
	transports = append(transports,
		transport{name: "unix", connect: connectUnix},
		transport{name: "http", connect: connectHTTP},
	)
}

// connectUnix starts a unix-socket daemon and reaches it the way a
// stdio-only host does: the go-sdk client spawns `clawd connect`.
func connectUnix(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	e.Daemon("unix_socket")
	return sdkConnect(t, &mcp.CommandTransport{Command: e.Command("connect")})
}

// connectHTTP starts a loopback HTTP daemon on a free port and connects the
// go-sdk's Streamable HTTP client with the token from the token file.
func connectHTTP(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	_, st := e.Daemon("tcp_loopback", "--port", "0")
	return sdkConnect(t, &mcp.StreamableClientTransport{
		Endpoint:   "http://" + st.Addr + "/mcp",
		HTTPClient: clawdtest.BearerClient(clawdtest.ReadToken(t, st.TokenFile)),
		MaxRetries: -1,
	})
}
