package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/runstate"
)

// maxResponse bounds what the CLI reads from one HTTP response.
const maxResponse = 256 << 20

// httpConn speaks MCP Streamable HTTP with JSON responses.
type httpConn struct {
	*bearer
	mu      sync.Mutex
	nextID  int64
	session string
	version string
}

func dialHTTP(t *runstate.Target) (*httpConn, error) {
	b, err := newBearer(t)
	if err != nil {
		return nil, err
	}
	return &httpConn{bearer: b}, nil
}

func (h *httpConn) setVersion(v string) {
	h.mu.Lock()
	h.version = v
	h.mu.Unlock()
}

func (h *httpConn) url() string { return "http://" + h.t.Addr + "/mcp" }

// post sends one message (bearer.do: the token file is read again once
// when the daemon refuses the token).
func (h *httpConn) post(ctx context.Context, body []byte) (*http.Response, error) {
	return h.do(func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		h.headers(req)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		return req, nil
	})
}

// headers sets the session's headers (bearer.do sets the token).
func (h *httpConn) headers(req *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
	}
	if h.version != "" {
		req.Header.Set("Mcp-Protocol-Version", h.version)
	}
}

func (h *httpConn) Call(ctx context.Context, method string, params any) (jsontext.Value, error) {
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.mu.Unlock()
	body, err := request(id, method, params)
	if err != nil {
		return nil, err
	}
	resp, err := h.post(ctx, body)
	if err != nil {
		if ctx.Err() != nil {
			// The aborted request cancels the call on the daemon too; the
			// notification covers a call that outlives its connection.
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			h.notify(cctx, "notifications/cancelled", cancelParams(id, ctx.Err().Error()))
			cancel()
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && method == "initialize" {
		h.mu.Lock()
		h.session = sid
		h.mu.Unlock()
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, err
	}
	m, perr := decodeResponse(data)
	if perr != nil || !m.IsResponse {
		why := "not a JSON-RPC response"
		if perr != nil {
			why = perr.Err.Message
		}
		return nil, fmt.Errorf("HTTP %d from the daemon, body %s: %.200q", resp.StatusCode, why, data)
	}
	if resp.StatusCode != http.StatusOK {
		if m.Error != nil {
			e := rpcError(m.Error)
			e.HTTPStatus = resp.StatusCode
			return nil, e
		}
		return nil, fmt.Errorf("HTTP %d from the daemon", resp.StatusCode)
	}
	return responseValue(&m)
}

func (h *httpConn) notify(ctx context.Context, method string, params any) error {
	body, err := request(-1, method, params)
	if err != nil {
		return err
	}
	resp, err := h.post(ctx, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", method, resp.StatusCode)
	}
	return nil
}

// Close ends the session with DELETE.
func (h *httpConn) Close() error {
	h.mu.Lock()
	sid := h.session
	h.mu.Unlock()
	if sid == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := h.do(func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.url(), nil)
		if err == nil {
			h.headers(req)
		}
		return req, err
	})
	if err != nil {
		return err
	}
	resp.Body.Close()
	h.hc.CloseIdleConnections()
	return nil
}

// GetHealth reads the health object of the daemon at t: GET /health on
// HTTP (no token sent), the clawd/health method on the socket.
func GetHealth(ctx context.Context, t *runstate.Target, version string) (raw jsontext.Value, h *runstate.Health, err error) {
	if t.Unix != "" {
		c, err := Dial(ctx, t, version)
		if err != nil {
			return nil, nil, err
		}
		defer c.Close()
		raw, err = c.Call(ctx, "clawd/health", nil)
		if err != nil {
			return nil, nil, err
		}
	} else if raw, err = runstate.FetchHealth(ctx, t.Addr); err != nil {
		return nil, nil, err
	}
	h = new(runstate.Health)
	if err := json.Unmarshal(raw, h, json.RejectUnknownMembers(false)); err != nil {
		return nil, nil, fmt.Errorf("the health object does not decode: %v", err)
	}
	return raw, h, nil
}
