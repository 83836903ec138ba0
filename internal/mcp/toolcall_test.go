package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/tools"
)

// timeoutResult answers normally but audits as a timeout, as a bash command
// killed at its timeout_ms does.
type timeoutResult struct {
	TimedOut bool `json:"timed_out"`
}

func (timeoutResult) AuditOutcome() string { return chain.OutcomeTimeout }

// Each way a call ends reaches the client in its MCP shape and the audit
// with the chain's outcome: the session only encodes what the chain decided.
func TestToolCallAnswersAndOutcomes(t *testing.T) {
	extra := []tools.Tool{
		newFuncTool("unencodable", tools.PermRead, func(context.Context, jsontext.Value) (any, error) {
			return map[string]any{"c": make(chan int)}, nil
		}),
		newFuncTool("timeout", tools.PermRead, func(context.Context, jsontext.Value) (any, error) {
			return timeoutResult{TimedOut: true}, nil
		}),
	}
	for _, tt := range []struct {
		tool, wantIn, notIn, result, detail string
	}{
		{"echo", `"isError":false`, "", chain.OutcomeOK, ""},
		{"timeout", `"structuredContent":{"timed_out":true},"isError":false`, "", chain.OutcomeTimeout, ""},
		{"fail", `"text":"file not found: x"}],"isError":true`, "", chain.OutcomeToolError, ""},
		{"panic", `"text":"internal error in the tool handler; the server logged the details"}],"isError":true`, "nil map", chain.OutcomeToolError, "handler_panic"},
		{"escape", `"error":{"code":-32005,"message":"sandbox_violation: \"link/x\": symlink link points outside`, "isError", chain.OutcomeSandboxViolation, "symlink link points outside the workspace root"},
		{"unencodable", `"text":"internal error: the tool's result could not be encoded"}],"isError":true`, "structuredContent", chain.OutcomeError, "result_encoding_failed"},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			tc := &testChain{}
			s := testServer(tc, extra...).NewSession(&chain.Caller{AuthMethod: "bearer", Kind: "local", Subject: "ws"}, SessionOptions{ReplyToCancelled: true})
			defer s.Close()
			ctx := context.Background()
			handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"x","version":"1"}}}`))
			handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			out := string(handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tt.tool+`"}}`)))
			if !strings.Contains(out, tt.wantIn) || tt.notIn != "" && strings.Contains(out, tt.notIn) {
				t.Errorf("answer %s\nwant it to contain %s and not %q", out, tt.wantIn, tt.notIn)
			}
			if o := tc.lastOutcome(); o.Result != tt.result || o.Detail != tt.detail {
				t.Errorf("outcome %+v, want %s (%s)", o, tt.result, tt.detail)
			}
		})
	}
}
