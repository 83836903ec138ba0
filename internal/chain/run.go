package chain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// Next is the protocol's side of one call that Run wraps: running the tool
// and committing the answer. The MCP session implements it on the value it
// allocates per call anyway, so passing it costs no allocation (a closure
// would: it escapes through the Authorizer interface).
type Next interface {
	// Call runs the tool (and may encode its result: an encoding failure
	// is reported as an *EncodeError). Run calls it at most once, never
	// for a denied call or once ctx has ended, and turns a panic in it into
	// a tool error.
	Call(ctx context.Context) (any, error)
	// Commit decides the answer once Call returned: false means the call
	// was cancelled first (ctx ended, or the protocol's cancel won), and
	// then, whatever Call returned, the call is answered as cancelled (or
	// not at all) and audited so. True means a cancel arriving later
	// changes nothing. Run calls it exactly once after every Call.
	Commit(ctx context.Context) bool
}

// EncodeError is what a Next returns when the tool succeeded but its result
// could not be encoded for the protocol: the call is audited as an error
// (result_encoding_failed), not as the tool's failure.
type EncodeError struct{ Err error }

func (e *EncodeError) Error() string { return "encoding the tool's result: " + e.Err.Error() }
func (e *EncodeError) Unwrap() error { return e.Err }

// AnswerKind says which form an Answer takes.
type AnswerKind uint8

const (
	// AnswerResult: the tool's result (Answer.Value).
	AnswerResult AnswerKind = iota
	// AnswerToolError: a failed call the model reads (an isError result
	// with Answer.Message).
	AnswerToolError
	// AnswerError: a JSON-RPC error (Answer.Err): the chain refused the
	// call, or the tool hit the sandbox (-32005).
	AnswerError
	// AnswerCancelled: the call was cancelled before its answer was
	// committed; the protocol answers "cancelled" or not at all.
	AnswerCancelled
)

// Answer is what the protocol sends for a call. It holds no encoded bytes:
// encoding is the protocol's.
type Answer struct {
	Kind    AnswerKind
	Err     *jsonrpc.Error // AnswerError
	Message string         // AnswerToolError: model-visible, never a stack or a panic value
	Value   any            // AnswerResult
}

// Run is the one entry point of a tools/call: it authorizes the call
// (Authorize: the five steps, the durable audit row), runs an allowed
// call through next (Execute: panic recovery, the commit, the outcome's
// label) and records the outcome on the audit row (Finish). A denied call
// never reaches next.
func (c *Chain) Run(ctx context.Context, call *Call, next Next) Answer {
	d := c.Authorize(ctx, call)
	if !d.Allowed() {
		return Answer{Kind: AnswerError, Err: d.Err}
	}
	a, o := Execute(ctx, call, next, c.Logger)
	c.Finish(call, d, o)
	return a
}

// Execute runs an allowed call through next and labels how it ended: the
// half of Run after the decision. Other Authorizers (test doubles, a chain
// that decides elsewhere) call it so every implementation answers and
// audits a call the same way. log may be nil; it receives a panic's value
// and stack, which the answer never carries.
//
// The outcome is, in this order: cancelled when ctx ended before the tool
// started or Commit says the call was cancelled (with detail finished_ and
// the outcome it would have had, when the tool returned before the cancel
// reached it); ok, or what the result's
// AuditOutcome method says (a bash timeout); error/result_encoding_failed
// for an *EncodeError; sandbox_violation (answered -32005) when os.Root
// refused a path while the tool ran; tool_error otherwise, with detail
// invalid_arguments, handler_panic or the error's own AuditDetail when
// those apply. A tools.CallerAware tool gets the caller's entity in its
// context (tools.CallerEntity).
func Execute(ctx context.Context, call *Call, next Next, log *slog.Logger) (Answer, Outcome) {
	start := time.Now()
	if ctx.Err() != nil {
		// Cancelled while the chain decided: the tool never starts.
		return Answer{Kind: AnswerCancelled}, Outcome{Result: OutcomeCancelled, Duration: time.Since(start)}
	}
	if _, ok := call.Entry.Tool.(tools.CallerAware); ok && call.Caller != nil {
		// Only a tool that forwards its caller (an upstream server set to
		// receive the identity) is told who calls: the entity the chain
		// authorized, never the client's own claim.
		ctx = tools.WithCaller(ctx, call.Caller.EntityID)
	}
	res, err := callNext(ctx, next)
	// The tool returned before any cancel reached its context: it ran to
	// its end, whatever becomes of the answer.
	finished := ctx.Err() == nil
	a, o := label(call, res, err, log)
	o.Duration = time.Since(start)
	// Whatever the tool returned (it may finish its work, or ignore its
	// context, while the cancel is read), a call cancelled before its
	// answer is committed is answered as cancelled, or not at all. Its row
	// still says what the tool did when it ran to its end (detail
	// finished_ok, finished_tool_error...): a command that ran is not
	// recorded as one that did not.
	if !next.Commit(ctx) {
		o.Detail = ""
		if finished {
			o.Detail = "finished_" + o.Result
		}
		o.Result = OutcomeCancelled
		return Answer{Kind: AnswerCancelled}, o
	}
	return a, o
}

// label is the answer and outcome of a tool that returned res, err (see
// Execute).
func label(call *Call, res any, err error, log *slog.Logger) (Answer, Outcome) {
	o := Outcome{Result: OutcomeOK}
	if err == nil {
		if ao, ok := res.(auditOutcomer); ok && ao.AuditOutcome() != "" {
			o.Result = ao.AuditOutcome()
		}
		return Answer{Kind: AnswerResult, Value: res}, o
	}
	var (
		v  *sandbox.Violation
		ee *EncodeError
		pe *panicError
	)
	switch {
	case errors.As(err, &v):
		o.Result, o.Detail = OutcomeSandboxViolation, v.Reason
		return Answer{Kind: AnswerError, Err: SandboxError(v.Path, v.Reason)}, o
	case errors.As(err, &ee):
		o.Result, o.Detail = OutcomeError, "result_encoding_failed"
		return Answer{Kind: AnswerToolError, Message: "internal error: the tool's result could not be encoded"}, o
	case errors.As(err, &pe):
		if log != nil {
			log.Error("tool handler panicked", "tool", clip(call.ToolName), "panic", fmt.Sprint(pe.val), "stack", string(pe.stack))
		}
		o.Result, o.Detail = OutcomeToolError, "handler_panic"
		return Answer{Kind: AnswerToolError, Message: "internal error in the tool handler; the server logged the details"}, o
	}
	o.Result = OutcomeToolError
	var (
		ae *tools.ArgError
		ad auditDetailer
	)
	switch {
	case errors.As(err, &ae):
		o.Detail = "invalid_arguments"
	case errors.As(err, &ad):
		o.Detail = ad.AuditDetail() // e.g. identity_refused
	} // otherwise the outcome, tool_error, says it all
	return Answer{Kind: AnswerToolError, Message: err.Error()}, o
}

// auditDetailer is an error that names its own outcome detail (an upstream
// call refused because the caller's identity could not be signed says
// identity_refused).
type auditDetailer interface{ AuditDetail() string }

// auditOutcomer is a result that ended otherwise than ok while still being
// a normal answer (tools.BashResult after a timeout says "timeout").
type auditOutcomer interface{ AuditOutcome() string }

// callNext calls the tool, turning a panic into an error so one faulty
// handler cannot take the server down.
func callNext(ctx context.Context, next Next) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &panicError{val: r, stack: debug.Stack()}
		}
	}()
	return next.Call(ctx)
}

type panicError struct {
	val   any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("internal error in tool handler: %v", e.val) }
