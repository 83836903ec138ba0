package client

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/support/token"
)

// bearer is the CLI's HTTP client of a daemon on loopback (MCP and the
// REST API alike): only loopback IP literals (runstate.CheckLoopback), the
// workspace token on every request, and when the daemon refuses the token
// (403 from this clawd, 401 from the REST API and older ones) the token
// file is read again once: the daemon may have renewed or rotated it.
type bearer struct {
	t  *runstate.Target
	hc *http.Client

	mu  sync.Mutex
	tok string
}

func newBearer(t *runstate.Target) (*bearer, error) {
	if err := runstate.CheckLoopback(t.Addr); err != nil {
		return nil, err
	}
	tok, err := token.ReadFile(t.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("reading the workspace token: %w", err)
	}
	return &bearer{t: t, hc: runstate.LoopbackClient(0), tok: tok}, nil
}

func (b *bearer) token() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tok
}

// do sends the request newReq builds (called again for the one retry, as a
// body cannot be sent twice) with the token, and returns the answer.
func (b *bearer) do(newReq func() (*http.Request, error)) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := newReq()
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+b.token())
		resp, err := b.hc.Do(req)
		if err != nil {
			return nil, err
		}
		refused := resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized
		if !refused || attempt > 0 {
			return resp, nil
		}
		tok, err := token.ReadFile(b.t.TokenFile)
		if err != nil || tok == b.token() {
			return resp, nil
		}
		resp.Body.Close()
		b.mu.Lock()
		b.tok = tok
		b.mu.Unlock()
	}
}
