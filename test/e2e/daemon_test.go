package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/test/clawdtest"
)

func init() {
	transports = append(transports,
		transport{name: "unix", connect: connectUnix},
		transport{name: "http", connect: connectHTTP},
	)
}

// startDaemon runs `clawd serve --transport TRANSPORT ARGS...` in the
// background until the test ends and returns its state file.
func (e *env) startDaemon(transport string, args ...string) runstate.State {
	e.t.Helper()
	clawdtest.ServeDaemon(e.t, e.command(append([]string{"serve", "--transport", transport}, args...)...))
	kind := map[string]string{"unix_socket": runstate.Unix, "tcp_loopback": runstate.TCP}[transport]
	file := runstate.Path(filepath.Join(e.home, ".local", "share", "clawde"), config.WorkspaceID(e.ws), kind)
	data, err := os.ReadFile(file)
	if err != nil {
		e.t.Fatalf("state file: %v", err)
	}
	var st runstate.State
	if err := json.Unmarshal(data, &st); err != nil {
		e.t.Fatal(err)
	}
	return st
}

// connectUnix starts a unix-socket daemon and reaches it the way a
// stdio-only host does: the go-sdk client spawns `clawd connect`.
func connectUnix(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	e.startDaemon("unix_socket")
	return sdkConnect(t, &mcp.CommandTransport{Command: e.command("connect")})
}

// bearer adds the workspace token to every request, as Claude Code's
// "headers" setting does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP starts a loopback HTTP daemon on a free port and connects the
// go-sdk's Streamable HTTP client with the token from the token file.
func connectHTTP(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	st := e.startDaemon("tcp_loopback", "--port", "0")
	tok, err := os.ReadFile(st.TokenFile)
	if err != nil {
		t.Fatalf("token file: %v", err)
	}
	return sdkConnect(t, &mcp.StreamableClientTransport{
		Endpoint:   "http://" + st.Addr + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: strings.TrimSpace(string(tok))}},
		MaxRetries: -1,
	})
}
