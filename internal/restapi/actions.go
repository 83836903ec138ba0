package restapi

// The endpoints that reach the daemon's upstream manager: test, refresh
// and logs. They are bounded by the server's own timeouts (connect plus
// read, at most 600 s) rather than the API's default, and end early when
// the client goes away.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/upstream"
)

// upstreamRow reads the server of the path and refuses the built-in one
// and a daemon without upstreams.
func (a *API) upstreamRow(ctx context.Context, rq *request, what string) (store.MCPServer, error) {
	s, err := a.DB.MCPServer(ctx, rq.id)
	if err != nil {
		return s, err
	}
	if s.Builtin {
		return s, fail(http.StatusForbidden, "builtin_server",
			"the built-in server %q is clawd's own tools, not an upstream: it has nothing to %s (GET /health and `clawd tools` show them)", s.Name, what)
	}
	if a.Upstreams == nil {
		return s, noUpstreams()
	}
	return s, nil
}

func noUpstreams() *apiError {
	return fail(http.StatusServiceUnavailable, "no_upstreams",
		"this clawd runs no upstream servers (it runs as an upstream of another clawd, which starts none of its own so that clawds cannot start each other without end); ask the clawd that runs the servers")
}

// bound is how long an operation on s may take: connect, then list.
func bound(s store.MCPServer) time.Duration {
	return time.Duration(s.ConnectTimeoutSeconds+s.ReadTimeoutSeconds)*time.Second + 5*time.Second
}

type testJSON struct {
	ID              int64      `json:"id"`
	Name            string     `json:"name"`
	OK              bool       `json:"ok"`
	LatencyMS       float64    `json:"latencyMs"`
	ListLatencyMS   float64    `json:"listLatencyMs"`
	ServerName      string     `json:"serverName"`
	ServerVersion   string     `json:"serverVersion"`
	ProtocolVersion string     `json:"protocolVersion"`
	DiscoveredTools []toolInfo `json:"discoveredTools"`
}

type toolInfo struct {
	Name         string `json:"name"`
	UpstreamName string `json:"upstreamName"`
	Description  string `json:"description"`
	Note         string `json:"note,omitzero"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// test connects once with a throwaway client (its own process for
// stdio), exactly as the daemon would (same configuration, same
// allowlist check), lists the tools and disconnects. A disabled server
// may be tested: that is how one checks it before enabling it.
func (a *API) test(_ context.Context, rq *request) (int, any, error) {
	ctx := rq.r.Context()
	s, err := a.upstreamRow(ctx, rq, "test")
	if err != nil {
		return 0, nil, err
	}
	if !emptyBody(rq.body) {
		return 0, nil, fail(http.StatusBadRequest, "bad_body", "test takes no body (or {}); it tests the stored configuration (change it first with PUT %s/%d)", Prefix, s.ID)
	}
	release, err := a.action()
	if err != nil {
		return 0, nil, err
	}
	defer release()
	cfg := a.Configs([]store.MCPServer{s})[0]
	cfg.Enabled = true
	ctx, cancel := context.WithTimeout(ctx, bound(s))
	defer cancel()
	res, err := a.Upstreams.Test(ctx, cfg)
	if err != nil {
		msg := secrets.MaskTextWithURL(err.Error(), s.URL)
		a.audit(rq, s.Name, chain.ResultAllow, "connect: test failed: "+msg)
		return 0, nil, fail(http.StatusBadGateway, "test_failed", "%s: %s", s.Name, msg)
	}
	out := testJSON{ID: s.ID, Name: s.Name, OK: true, LatencyMS: ms(res.Latency), ListLatencyMS: ms(res.ListLatency),
		ServerName: res.ServerName, ServerVersion: res.ServerVersion, ProtocolVersion: res.ProtocolVersion,
		DiscoveredTools: make([]toolInfo, 0, len(res.Tools))}
	for _, t := range res.Tools {
		out.DiscoveredTools = append(out.DiscoveredTools, toolInfo{t.Exposed, t.Original, t.Description, t.Note})
	}
	a.audit(rq, s.Name, chain.ResultAllow, fmt.Sprintf("connect: test: ok, %d tools in %.0f ms", len(res.Tools), out.LatencyMS+out.ListLatencyMS))
	return http.StatusOK, out, nil
}

// refreshJSON is the outcome of refreshing one server.
type refreshJSON struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	OK        bool    `json:"ok"`
	Status    string  `json:"status"`
	ToolCount int     `json:"toolCount"`
	Error     string  `json:"error"`
	LatencyMS float64 `json:"latencyMs"`
}

type refreshAllJSON struct {
	Servers   []refreshJSON `json:"servers"`
	Refreshed int           `json:"refreshed"`
	Failed    int           `json:"failed"`
	Skipped   int           `json:"skipped"` // disabled servers
}

// refreshOne drops a server's connection and connects again now (also
// out of the error state), listing its tools anew, and answers the
// outcome: 200 when it is connected, 502 when it is not.
func (a *API) refreshOne(_ context.Context, rq *request) (int, any, error) {
	ctx := rq.r.Context()
	s, err := a.upstreamRow(ctx, rq, "refresh")
	if err != nil {
		return 0, nil, err
	}
	if !emptyBody(rq.body) {
		return 0, nil, fail(http.StatusBadRequest, "bad_body", "refresh takes no body (or {})")
	}
	if !s.Enabled {
		return 0, nil, fail(http.StatusConflict, "server_disabled",
			"%s is disabled, so there is no connection to refresh; enable it (PUT %s/%d/toggle?enabled=true), or test it as it is (POST %s/%d/test)", s.Name, Prefix, s.ID, Prefix, s.ID)
	}
	release, err := a.action()
	if err != nil {
		return 0, nil, err
	}
	defer release()
	res := a.refresh(ctx, rq, s)
	if !res.OK {
		return 0, nil, fail(http.StatusBadGateway, "refresh_failed", "%s: %s (status %s)", s.Name, res.Error, res.Status)
	}
	return http.StatusOK, res, nil
}

// refreshAll refreshes every enabled upstream in parallel and answers each
// outcome; disabled servers are listed as skipped.
func (a *API) refreshAll(_ context.Context, rq *request) (int, any, error) {
	ctx := rq.r.Context()
	if a.Upstreams == nil {
		return 0, nil, noUpstreams()
	}
	if !emptyBody(rq.body) {
		return 0, nil, fail(http.StatusBadRequest, "bad_body", "refresh takes no body (or {})")
	}
	release, err := a.action() // one slot for the whole set: it is one request
	if err != nil {
		return 0, nil, err
	}
	defer release()
	rctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	rows, err := a.DB.MCPServers(rctx)
	cancel()
	if err != nil {
		return 0, nil, err
	}
	out := refreshAllJSON{Servers: []refreshJSON{}}
	var wg sync.WaitGroup
	results := make([]refreshJSON, len(rows))
	for i, s := range rows {
		if s.Builtin {
			continue
		}
		if !s.Enabled {
			results[i] = refreshJSON{ID: s.ID, Name: s.Name, Status: store.StatusDisabled}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = a.refresh(ctx, rq, s)
		}()
	}
	wg.Wait()
	for i, s := range rows {
		if s.Builtin {
			continue
		}
		r := results[i]
		switch {
		case !s.Enabled:
			out.Skipped++
		case r.OK:
			out.Refreshed++
		default:
			out.Failed++
		}
		out.Servers = append(out.Servers, r)
	}
	return http.StatusOK, out, nil
}

// refresh refreshes one enabled server and reports how it ended.
func (a *API) refresh(ctx context.Context, rq *request, s store.MCPServer) refreshJSON {
	ctx, cancel := context.WithTimeout(ctx, bound(s))
	defer cancel()
	start := time.Now()
	err := a.waitKnown(ctx, s.Name)
	if err == nil {
		err = a.Upstreams.Refresh(ctx, s.Name)
	}
	res := refreshJSON{ID: s.ID, Name: s.Name, LatencyMS: ms(time.Since(start)), Status: store.StatusDisconnected}
	if st, ok := a.Upstreams.StatusOf(s.Name); ok {
		res.Status, res.ToolCount = st.State, st.ToolCount
		if err == nil && st.State != upstream.StateConnected {
			err = errors.New(st.LastError)
		}
	}
	if err != nil {
		res.Error = secrets.MaskTextWithURL(err.Error(), s.URL)
		a.audit(rq, s.Name, chain.ResultAllow, "connect: refresh failed: "+res.Error)
		return res
	}
	res.OK = true
	a.audit(rq, s.Name, chain.ResultAllow, "connect: refresh: "+res.Status+", "+strconv.Itoa(res.ToolCount)+" tools")
	return res
}

// waitKnown waits until the manager has the server: one added a moment
// ago is applied by the daemon's table watch within about a second.
func (a *API) waitKnown(ctx context.Context, name string) error {
	wait := a.ApplyWait
	if wait <= 0 {
		wait = 3 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		if _, ok := a.Upstreams.StatusOf(name); ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the daemon has not picked up %s (its table watch applies changes within about a second); retry", name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type logsJSON struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// Logs is the recent stderr of the server's process (the current one
	// or the last), secrets masked; "" for HTTP servers.
	Logs string `json:"logs"`
	Note string `json:"note,omitzero"`
}

// logs answers the recent stderr of a stdio server's process.
func (a *API) logs(ctx context.Context, rq *request) (int, any, error) {
	s, err := a.upstreamRow(ctx, rq, "log")
	if err != nil {
		return 0, nil, err
	}
	out := logsJSON{ID: s.ID, Name: s.Name, Transport: wireTransport(s.Transport), Logs: string(a.Upstreams.Logs(s.Name))}
	switch {
	case s.Transport != store.TransportStdio:
		out.Note = "only stdio servers have a log here: an HTTP server's output stays with the server"
	case out.Logs == "" && !s.Enabled:
		out.Note = "the server is disabled and no process of it ran since the daemon started"
	case out.Logs == "":
		out.Note = "its process has written nothing to stderr since the daemon started it"
	}
	return http.StatusOK, out, nil
}

// emptyBody: no body, or an empty JSON object (what many HTTP clients
// send with every POST).
func emptyBody(b []byte) bool {
	t := strings.TrimSpace(string(b))
	if t == "" {
		return true
	}
	if t[0] != '{' || t[len(t)-1] != '}' {
		return false
	}
	return strings.TrimSpace(t[1:len(t)-1]) == ""
}
