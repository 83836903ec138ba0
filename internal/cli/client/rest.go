package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/support/token"
)

// REST is a client of a daemon's REST API (/api/v1/..., docs/upstreams.md)
// on loopback HTTP, with the workspace token: the only credential the API
// takes. Addresses are checked as for MCP (loopback IP literals only) and
// the token file is re-read once when the daemon refuses it (rotated).
type REST struct {
	t   *runstate.Target
	hc  *http.Client
	mu  sync.Mutex
	tok string
}

// APIError is an answer of the API other than 2xx: its status, code and
// message (which says what was wrong and what to do).
type APIError struct {
	Status  int
	Code    string `json:"error"`
	Message string `json:"message"`
}

func (e *APIError) Error() string { return e.Message }

// DialREST prepares a client of the daemon at t (an HTTP target).
func DialREST(t *runstate.Target) (*REST, error) {
	if t.Addr == "" {
		return nil, fmt.Errorf("%s has no HTTP listener, so no REST API", t)
	}
	if err := runstate.CheckLoopback(t.Addr); err != nil {
		return nil, err
	}
	tok, err := token.ReadFile(t.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("reading the workspace token: %w", err)
	}
	return &REST{t: t, hc: runstate.LoopbackClient(0), tok: tok}, nil
}

// Do sends a request (body, if not nil, as JSON) and returns the answer's
// JSON (nil for 204). A non-2xx answer is an *APIError.
func (c *REST) Do(ctx context.Context, method, path string, body any) (jsontext.Value, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if payload != nil {
			rd = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(ctx, method, "http://"+c.t.Addr+path, rd)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		req.Header.Set("Authorization", "Bearer "+c.tok)
		c.mu.Unlock()
		req.Header.Set("Accept", "application/json")
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			if tok, err := token.ReadFile(c.t.TokenFile); err == nil && tok != c.tok {
				c.mu.Lock()
				c.tok = tok
				c.mu.Unlock()
				continue
			}
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			if resp.StatusCode == http.StatusNoContent {
				return nil, nil
			}
			if !jsontext.Value(data).IsValid() {
				return nil, fmt.Errorf("HTTP %d from the daemon with a body that is not JSON: %.200q", resp.StatusCode, data)
			}
			return jsontext.Value(data), nil
		}
		ae := &APIError{Status: resp.StatusCode}
		if json.Unmarshal(data, ae, json.RejectUnknownMembers(false)) != nil || ae.Message == "" {
			return nil, fmt.Errorf("HTTP %d from the daemon: %.200q", resp.StatusCode, data)
		}
		return nil, ae
	}
}
