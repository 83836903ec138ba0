// Package client is the CLI's MCP client: it talks JSON-RPC to a running
// clawd daemon for the tools, call, health and token commands. Which
// daemon, and whether it answers, is runstate's business (ResolveWorkspace,
// Find, ProbeHealth); this package only dials a runstate.Target: the unix
// socket, or loopback HTTP with the workspace token.
package client

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/runstate"
)

// ClientName is clientInfo.name of the CLI: an unknown name, so the
// daemon resolves it to the local:<workspace> entity (trust level 2).
const ClientName = "clawd-cli"

// RPCError is a JSON-RPC error the daemon answered with.
type RPCError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitzero"`
	// HTTPStatus is the status of an HTTP-level refusal (401, 403, ...), 0
	// for an error inside a normal response.
	HTTPStatus int `json:"-"`
}

func (e *RPCError) Error() string {
	var b strings.Builder
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, "HTTP %d: ", e.HTTPStatus)
	}
	b.WriteString(strconv.Itoa(e.Code))
	b.WriteString(" ")
	b.WriteString(e.Message)
	if len(e.Data) > 0 {
		b.WriteString(" ")
		b.Write(e.Data)
	}
	return b.String()
}

// Conn is an initialized MCP session with a daemon.
type Conn interface {
	// Call sends a request and returns its result, or an *RPCError. When
	// ctx ends first, the request is cancelled on the daemon
	// (notifications/cancelled) and ctx's error is returned.
	Call(ctx context.Context, method string, params any) (jsontext.Value, error)
	// Close ends the session.
	Close() error
}

// Dial connects to t and initializes an MCP session.
func Dial(ctx context.Context, t *runstate.Target, version string) (Conn, error) {
	var c Conn
	var err error
	if t.Unix != "" {
		c, err = dialUnix(ctx, t.Unix)
	} else {
		c, err = dialHTTP(t)
	}
	if err != nil {
		return nil, err
	}
	if err := initialize(ctx, c, version); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

type initializer interface {
	notify(ctx context.Context, method string, params any) error
	setVersion(v string)
}

func initialize(ctx context.Context, c Conn, version string) error {
	res, err := c.Call(ctx, "initialize", map[string]any{
		"protocolVersion": mcp.LatestVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": ClientName, "version": version},
	})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res, &r, json.RejectUnknownMembers(false)); err != nil || r.ProtocolVersion == "" {
		return fmt.Errorf("initialize: the daemon's answer has no protocolVersion")
	}
	in, ok := c.(initializer)
	if !ok {
		return fmt.Errorf("initialize: connection type %T cannot finish the handshake", c)
	}
	in.setVersion(r.ProtocolVersion)
	return in.notify(ctx, "notifications/initialized", nil)
}

// request encodes a JSON-RPC request or notification (id < 0).
func request(id int64, method string, params any) ([]byte, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if id >= 0 {
		msg["id"] = id
	}
	if params != nil {
		msg["params"] = params
	}
	return json.Marshal(msg, json.Deterministic(true))
}

// decodeResponse reads a response the daemon sent with the strict decoder
// the daemon itself uses on requests (internal/jsonrpc). A message that is
// not a response (a notification such as tools/list_changed) is returned
// with IsResponse false.
func decodeResponse(data []byte) (jsonrpc.Message, *jsonrpc.ParseError) {
	return jsonrpc.Parse(data)
}

// responseValue is a response's result, or its error as an *RPCError.
func responseValue(m *jsonrpc.Message) (jsontext.Value, error) {
	if m.Error != nil {
		return nil, rpcError(m.Error)
	}
	return m.Result, nil
}

// rpcError converts a decoded JSON-RPC error.
func rpcError(e *jsonrpc.Error) *RPCError {
	out := &RPCError{Code: e.Code, Message: e.Message}
	if d, ok := e.Data.(jsontext.Value); ok {
		out.Data = d
	}
	return out
}

func cancelParams(id int64, reason string) map[string]any {
	return map[string]any{"requestId": id, "reason": reason}
}
