package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/runstate"
)

// REST is a client of a daemon's REST API (/api/v1/..., docs/upstreams.md)
// on loopback HTTP, with the workspace token: the only credential the API
// takes. Addresses are checked as for MCP (loopback IP literals only) and
// the token file is re-read once when the daemon refuses it (rotated).
type REST struct{ *bearer }

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
	b, err := newBearer(t)
	if err != nil {
		return nil, err
	}
	return &REST{b}, nil
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
	resp, err := c.do(func() (*http.Request, error) {
		var rd io.Reader
		if payload != nil {
			rd = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(ctx, method, "http://"+c.t.Addr+path, rd)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, nil
	})
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	resp.Body.Close()
	if err != nil {
		return nil, err
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

// API is a client of the daemon's REST API over whichever transport the
// daemon serves: *REST on loopback HTTP, *SocketAPI on the unix socket.
type API interface {
	Do(ctx context.Context, method, path string, body any) (jsontext.Value, error)
	Close() error
}

// Close releases idle connections.
func (c *REST) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// SocketAPI carries REST API requests over a unix-socket session as the
// daemon's clawd/api method (the socket speaks JSON-RPC, not HTTP); the
// answers are the same as over HTTP.
type SocketAPI struct{ Conn Conn }

// APIMethod is the daemon's method for it (daemon.APIMethod).
const APIMethod = "clawd/api"

// Do implements API.
func (s *SocketAPI) Do(ctx context.Context, method, path string, body any) (jsontext.Value, error) {
	params := map[string]any{"method": method, "path": path}
	if body != nil {
		params["body"] = body
	}
	raw, err := s.Conn.Call(ctx, APIMethod, params)
	if err != nil {
		return nil, err
	}
	var res struct {
		Status int            `json:"status"`
		Body   jsontext.Value `json:"body"`
	}
	if err := json.Unmarshal(raw, &res, json.RejectUnknownMembers(false)); err != nil || res.Status == 0 {
		return nil, fmt.Errorf("%s: unexpected answer %.200q", APIMethod, raw)
	}
	if res.Status >= 200 && res.Status < 300 {
		if res.Body.Kind() == 'n' {
			return nil, nil
		}
		return res.Body, nil
	}
	ae := &APIError{Status: res.Status}
	if json.Unmarshal(res.Body, ae, json.RejectUnknownMembers(false)) != nil || ae.Message == "" {
		return nil, fmt.Errorf("status %d from the daemon: %.200q", res.Status, res.Body)
	}
	return nil, ae
}

// Close ends the session.
func (s *SocketAPI) Close() error { return s.Conn.Close() }
