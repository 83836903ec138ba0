package mcp

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

type callParams struct {
	Name      *string        `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Meta      jsontext.Value `json:"_meta"`
}

// callTool runs one tools/call through the chain and the handler and returns
// the response (nil when a cancelled call must not be answered).
func (s *Session) callTool(ctx context.Context, msg *jsonrpc.Message, cancelled bool) []byte {
	if cancelled {
		return s.cancelledResponse(msg.ID)
	}
	own, ok := s.srv.acquireCall(ctx)
	if !ok {
		return s.cancelledResponse(msg.ID)
	}
	defer s.srv.releaseCall(own)

	var p callParams
	if err := json.Unmarshal(orEmpty(msg.Params), &p); err != nil {
		return jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+err.Error()))
	}
	if p.Name == nil {
		return jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid params: "name" is required`))
	}
	if len(p.Arguments) > 0 && p.Arguments.Kind() != '{' && p.Arguments.Kind() != 'n' {
		return jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid params: "arguments" must be an object`))
	}
	if p.Arguments.Kind() == 'n' {
		p.Arguments = nil
	}
	entry, _ := s.srv.Registry.Lookup(*p.Name)
	call := &chain.Call{Caller: s.caller, Entry: entry, ToolName: *p.Name, Args: p.Arguments, RequestID: msg.ID.Raw()}
	d := s.srv.Chain.Authorize(ctx, call)
	if !d.Allowed() {
		return jsonrpc.AppendError(nil, msg.ID, d.Err)
	}

	start := time.Now()
	var res any
	err := ctx.Err() // cancelled while the chain decided: do not start the tool
	if err == nil {
		res, err = runTool(ctx, entry.Tool, p.Arguments)
	}
	out := chain.Outcome{Result: chain.OutcomeOK, Duration: time.Since(start)}
	var resp []byte
	var v *sandbox.Violation
	// Whatever the tool returned (a tool may finish its work, or ignore
	// its context, while the cancel is read), a call cancelled before its
	// answer is committed is answered as cancelled, or not at all.
	switch committed := s.calls.commit(msg.ID.Key(), ctx); {
	case !committed:
		out.Result, out.Detail = chain.OutcomeCancelled, ""
		resp = s.cancelledResponse(msg.ID)
	case err == nil:
		if o, ok := res.(auditOutcomer); ok && o.AuditOutcome() != "" {
			out.Result = o.AuditOutcome()
		}
		resp, err = appendToolResult(msg.ID, res)
		if err != nil {
			out.Result, out.Detail = chain.OutcomeError, "result_encoding_failed"
			resp = appendToolError(msg.ID, "internal error: the tool's result could not be encoded")
		}
	case errors.As(err, &v):
		out.Result, out.Detail = chain.OutcomeSandboxViolation, v.Reason
		resp = jsonrpc.AppendError(nil, msg.ID, chain.SandboxError(v.Path, v.Reason))
	default:
		var pe *panicError
		if errors.As(err, &pe) {
			s.srv.logger().Error("tool handler panicked", "tool", *p.Name, "panic", fmt.Sprint(pe.val), "stack", string(pe.stack))
		}
		out.Result, out.Detail = chain.OutcomeToolError, errorKind(err)
		resp = appendToolError(msg.ID, toolMessage(err))
	}
	s.srv.Chain.Finish(call, d, out)
	return resp
}

// auditOutcomer is a result that ended otherwise than ok while still being
// a normal answer (tools.BashResult after a timeout).
type auditOutcomer interface{ AuditOutcome() string }

// runTool calls the tool, turning a panic into an error so one faulty
// handler cannot take the server down.
func runTool(ctx context.Context, t tools.Tool, args jsontext.Value) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{val: r, stack: debug.Stack()}
		}
	}()
	return t.Call(ctx, args)
}

type panicError struct {
	val   any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("internal error in tool handler: %v", e.val) }

func errorKind(err error) string {
	var ae *tools.ArgError
	var pe *panicError
	switch {
	case errors.As(err, &ae):
		return "invalid_arguments"
	case errors.As(err, &pe):
		return "handler_panic"
	}
	return "" // the outcome, tool_error, says it all
}

func toolMessage(err error) string {
	var pe *panicError
	if errors.As(err, &pe) {
		return "internal error in the tool handler; the server logged the details"
	}
	return err.Error()
}

func (s *Session) cancelledResponse(id jsonrpc.ID) []byte {
	if !s.opts.ReplyToCancelled {
		return nil
	}
	return appendToolError(id, "cancelled")
}
