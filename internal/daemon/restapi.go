package daemon

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/restapi"
	"github.com/clawde/clawd/internal/transport"
)

// APIMethod carries one REST API request over the unix socket, which has
// no HTTP: params {"method", "path", "body"}, result {"status", "body"},
// the same answer the HTTP listener gives under /api/ (docs/upstreams.md).
// `clawd mcp refresh` and `mcp logs` use it when the workspace's daemon
// serves the socket.
const APIMethod = "clawd/api"

// socketCallerKey carries the caller of an APIMethod request to the API;
// only this file sets it.
type socketCallerKey struct{}

// restAPI is the REST API (docs/upstreams.md): the table through the
// store, test, refresh and logs through this daemon's upstream manager,
// changes into the audit log. The transport authenticates first; the
// caller's entity is the kind its credential maps to on this workspace,
// exactly as for a tools/call.
func (d *Daemon) restAPI() *restapi.API {
	api := &restapi.API{
		DB:      d.Store,
		Configs: UpstreamConfigs,
		Audit:   d.Chain.Audit,
		Logger:  d.Logger.With("component", "restapi"),
		Identify: func(r *http.Request) (restapi.Caller, bool) {
			if c, ok := r.Context().Value(socketCallerKey{}).(restapi.Caller); ok {
				return c, true
			}
			id, ok := transport.RequestIdentity(r.Context())
			if !ok || id.Kind == "" {
				return restapi.Caller{}, false
			}
			return restapi.Caller{Entity: id.Kind + ":" + d.WorkspaceID, Kind: id.Kind, CredentialID: id.CredentialID}, true
		},
	}
	if m := d.upstreams.Load(); m != nil { // nil when this clawd runs as another clawd's upstream
		api.Upstreams = m
	}
	return api
}

// registerAPIMethod serves APIMethod to unix-socket sessions only: their
// peer is the user by the kernel's word, and their kind and credential
// decide as on HTTP. A stdio session's host never needs it, and HTTP has
// the API itself.
func (d *Daemon) registerAPIMethod() {
	if d.Server.Extensions == nil {
		d.Server.Extensions = map[string]mcp.MethodHandler{}
	}
	api := d.restAPI()
	d.Server.Extensions[APIMethod] = func(ctx context.Context, s *mcp.Session, params jsontext.Value) (any, *jsonrpc.Error) {
		c := s.Caller()
		if c == nil || c.Transport != "unix" || c.Kind == "" {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
				"method not found: "+APIMethod+" is served only on the unix socket; on loopback HTTP the same API is under "+restapi.Prefix)
		}
		var p struct {
			Method string         `json:"method"`
			Path   string         `json:"path"`
			Body   jsontext.Value `json:"body"`
		}
		if err := json.Unmarshal(params, &p, json.RejectUnknownMembers(true)); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+APIMethod+` takes {"method": "GET", "path": "`+restapi.Prefix+`", "body": {...}}: `+err.Error())
		}
		if !strings.HasPrefix(p.Path, restapi.Prefix) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: path must start with "+restapi.Prefix)
		}
		var body []byte
		if len(p.Body) > 0 && p.Body.Kind() != 'n' {
			body = p.Body
		}
		req, err := http.NewRequestWithContext(ctx, p.Method, "http://unix"+p.Path, bytes.NewReader(body))
		if err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+err.Error())
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		caller := restapi.Caller{Entity: c.Kind + ":" + d.WorkspaceID, Kind: c.Kind, CredentialID: c.CredentialID}
		if c.ClaimKind != "" {
			caller.Claimed = c.ClaimKind + ":" + d.WorkspaceID
		}
		req = req.WithContext(context.WithValue(ctx, socketCallerKey{}, caller))
		w := &memResponse{header: http.Header{}, status: http.StatusOK}
		api.ServeHTTP(w, req)
		out := jsontext.Value("null")
		if b := bytes.TrimSpace(w.body.Bytes()); len(b) > 0 {
			out = b
		}
		return struct {
			Status int            `json:"status"`
			Body   jsontext.Value `json:"body"`
		}{w.status, out}, nil
	}
}

// memResponse is the http.ResponseWriter of an APIMethod request.
type memResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (m *memResponse) Header() http.Header { return m.header }
func (m *memResponse) WriteHeader(s int) {
	if !m.wrote {
		m.status, m.wrote = s, true
	}
}
func (m *memResponse) Write(b []byte) (int, error) {
	m.wrote = true
	return m.body.Write(b)
}
