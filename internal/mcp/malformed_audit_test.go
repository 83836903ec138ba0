package mcp_test

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"testing"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/tools"
)

// A malformed tools/call of an authenticated caller (no name, arguments
// that are not an object, params that do not decode) is refused with
// -32602 and, like every other call that passed auth, is on record: a
// Deny at step params, with the digest of what was sent.
func TestMalformedCallIsAudited(t *testing.T) {
	audit := &chain.MemoryAudit{}
	srv := &mcp.Server{
		Version:  "1.0.0",
		Registry: tools.NewRegistry(&tools.StaticProvider{Name: "t", Source: tools.BuiltinOrigin(), List: []tools.Tool{echoLike{}}}),
		Chain:    &chain.Chain{Trust: chain.NewMemoryTrust(chain.DefaultTrustRows()...), Audit: audit},
	}
	c := serveSession(t, srv, &chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "local", Subject: "ws"})
	for _, tt := range []struct {
		params any
		digest bool // the row carries the arguments' digest
	}{
		{map[string]any{"arguments": map[string]any{"command": "rm -rf /"}}, true},
		{map[string]any{"name": "echo", "arguments": "rm -rf /"}, true},
		{map[string]any{"name": 7, "arguments": map[string]any{}}, false}, // undecodable: no arguments to digest
	} {
		params := tt.params
		before := len(audit.Rows())
		r := c.request("tools/call", params)
		e, _ := r["error"].(map[string]any)
		if e == nil || e["code"] != float64(jsonrpc.CodeInvalidParams) {
			t.Errorf("tools/call %v answered %v, want -32602", params, r)
		}
		rows := audit.Rows()
		if len(rows) != before+1 {
			t.Errorf("tools/call %v: %d audit rows written, want 1", params, len(rows)-before)
			continue
		}
		row := rows[len(rows)-1]
		if row.Result != chain.ResultDeny || row.Step != chain.StepParams || row.EntityID != "local:ws" || (row.ArgsSHA256 != "") != tt.digest {
			t.Errorf("tools/call %v: row %+v, want a Deny of local:ws at step params with the arguments' digest", params, row)
		}
	}
}

type echoLike struct{}

func (echoLike) Spec() *tools.Spec {
	return &tools.Spec{Name: "echo", Description: "Echoes.", Permission: tools.PermRead, InputSchema: []byte(`{"type":"object"}`)}
}

func (echoLike) Call(context.Context, jsontext.Value) (any, error) { return map[string]any{}, nil }
