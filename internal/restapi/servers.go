package restapi

// The table endpoints: list, get, create, update (PATCH semantics),
// delete, toggle. The store validates (the same validator as `clawd mcp
// add`) and a running daemon applies each change as it applies the CLI's.

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/store"
)

type listJSON struct {
	Servers []serverJSON `json:"servers"`
}

// list answers every server, the built-in one first; ?name= picks one by
// name (without regard to case), as the CLI finds a server's id.
func (a *API) list(ctx context.Context, rq *request) (int, any, error) {
	q := rq.r.URL.Query()
	for k := range q {
		if k != "name" {
			return 0, nil, fail(http.StatusBadRequest, "unknown_parameter", "unknown query parameter %q; the list takes only ?name=NAME", clip(k, 60))
		}
	}
	rows, err := a.DB.MCPServers(ctx)
	if err != nil {
		return 0, nil, err
	}
	out := listJSON{Servers: []serverJSON{}}
	name, byName := q["name"]
	for _, s := range rows {
		if byName && !strings.EqualFold(s.Name, name[0]) {
			continue
		}
		out.Servers = append(out.Servers, toJSON(s))
	}
	return http.StatusOK, out, nil
}

// get answers one server with its tools cache.
func (a *API) get(ctx context.Context, rq *request) (int, any, error) {
	s, err := a.DB.MCPServer(ctx, rq.id)
	if err != nil {
		return 0, nil, err
	}
	out := toJSON(s)
	out.Tools = []toolJSON{}
	if !s.Builtin {
		list, err := a.DB.MCPTools(ctx, s.ID)
		if err != nil {
			return 0, nil, err
		}
		for _, t := range list {
			schema := t.InputSchema
			if len(schema) == 0 {
				schema = []byte("{}")
			}
			out.Tools = append(out.Tools, toolJSON{Name: t.Name, Description: t.Description, InputSchema: jsontext.Value(schema), LastSeenAt: t.LastSeenAt})
		}
	}
	return http.StatusOK, out, nil
}

// create adds a server: name is required; transport defaults to stdio,
// the timeouts to 30 and 60 s, enabled to true.
func (a *API) create(ctx context.Context, rq *request) (int, any, error) {
	p, err := decodePatch(rq.body)
	if err != nil {
		return 0, nil, err
	}
	if p.Name == nil {
		return 0, nil, fail(http.StatusBadRequest, "invalid_field", "field name is required: 1-128 letters, digits, '-' or '_' (tools are exposed as NAME__TOOL)")
	}
	s, err := p.Apply(store.MCPServer{Transport: store.TransportStdio, Enabled: true,
		ConnectTimeoutSeconds: store.DefaultConnectTimeout, ReadTimeoutSeconds: store.DefaultReadTimeout})
	if err != nil {
		return 0, nil, err
	}
	if strings.EqualFold(s.Name, store.BuiltinServerName) {
		return 0, nil, fail(http.StatusConflict, "name_taken", "the name %q is the built-in server's (clawd's own tools); pick another name", s.Name)
	}
	confirm, done := a.change(rq, func(_, row store.MCPServer) (string, string) {
		return row.Name, "configure: added " + row.AddedSummary()
	})
	row, err := a.DB.InsertServer(ctx, s, confirm)
	done(err)
	if err != nil {
		return 0, nil, err
	}
	rq.w.Header().Set("Location", Prefix+"/"+strconv.FormatInt(row.ID, 10))
	return http.StatusCreated, toJSON(row), nil
}

// update applies the fields sent and keeps the others (PUT and PATCH).
func (a *API) update(ctx context.Context, rq *request) (int, any, error) {
	p, err := decodePatch(rq.body)
	if err != nil {
		return 0, nil, err
	}
	before, err := a.DB.MCPServer(ctx, rq.id)
	if err != nil {
		return 0, nil, err
	}
	if before.Builtin {
		return 0, nil, builtinRefusal()
	}
	confirm, done := a.change(rq, func(before, row store.MCPServer) (string, string) {
		changed := changedFields(before, row)
		detail := "nothing changed"
		if len(changed) > 0 {
			detail = "changed " + strings.Join(changed, ", ")
		}
		if before.Name != row.Name {
			detail += " (renamed from " + before.Name + ")"
		}
		return row.Name, "configure: " + detail
	})
	row, err := a.DB.UpdateServer(ctx, rq.id, p, confirm)
	done(err)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, toJSON(row), nil
}

// changedFields names (never shows) what differs between two rows.
func changedFields(a, b store.MCPServer) []string {
	var out []string
	add := func(cond bool, name string) {
		if cond {
			out = append(out, name)
		}
	}
	add(a.Name != b.Name, "name")
	add(a.Description != b.Description, "description")
	add(a.Transport != b.Transport, "transport")
	add(a.Command != b.Command, "command")
	add(!slices.Equal(a.Args, b.Args), "argsJson")
	add(a.Cwd != b.Cwd, "cwd")
	add(!maps.Equal(a.Env, b.Env), "envJson")
	add(a.URL != b.URL, "url")
	add(!maps.Equal(a.Headers, b.Headers), "headersJson")
	add(a.ConnectTimeoutSeconds != b.ConnectTimeoutSeconds, "connectTimeoutSeconds")
	add(a.ReadTimeoutSeconds != b.ReadTimeoutSeconds, "readTimeoutSeconds")
	add(a.Enabled != b.Enabled, "enabled")
	return out
}

// delete removes a server and its tools cache.
func (a *API) delete(ctx context.Context, rq *request) (int, any, error) {
	s, err := a.DB.MCPServer(ctx, rq.id)
	if err != nil {
		return 0, nil, err
	}
	if s.Builtin {
		return 0, nil, builtinRefusal()
	}
	confirm, done := a.change(rq, func(before, _ store.MCPServer) (string, string) {
		return before.Name, "configure: removed"
	})
	err = a.DB.DeleteServer(ctx, rq.id, confirm)
	done(err)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// toggle enables or disables a server: ?enabled=true|false, nothing else.
func (a *API) toggle(ctx context.Context, rq *request) (int, any, error) {
	q := rq.r.URL.Query()
	vals, ok := q["enabled"]
	if !ok || len(vals) != 1 || len(q) != 1 || len(rq.body) != 0 {
		return 0, nil, fail(http.StatusBadRequest, "bad_parameter", "toggle takes exactly one query parameter and no body: ?enabled=true or ?enabled=false")
	}
	var on bool
	switch vals[0] {
	case "true":
		on = true
	case "false":
	default:
		return 0, nil, fail(http.StatusBadRequest, "bad_parameter", "enabled=%q: use true or false", clip(vals[0], 40))
	}
	s, err := a.DB.MCPServer(ctx, rq.id)
	if err != nil {
		return 0, nil, err
	}
	if s.Builtin {
		return 0, nil, builtinRefusal()
	}
	confirm, done := a.change(rq, func(_, row store.MCPServer) (string, string) {
		if row.Enabled {
			return row.Name, "configure: enabled"
		}
		return row.Name, "configure: disabled"
	})
	_, err = a.DB.SetServerEnabled(ctx, rq.id, on, confirm)
	done(err)
	if err != nil {
		return 0, nil, err
	}
	row, err := a.DB.MCPServer(ctx, rq.id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, toJSON(row), nil
}
