package chain

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// recNext is a Next whose tool is fn; it counts Call and Commit and checks
// their order. Commit answers commit (true when unset) unless ctx ended.
type recNext struct {
	t       *testing.T
	fn      func(ctx context.Context) (any, error)
	commit  func() bool
	calls   int
	commits int
}

func (n *recNext) Call(ctx context.Context) (any, error) {
	n.calls++
	if n.commits > 0 {
		n.t.Error("Call after Commit")
	}
	return n.fn(ctx)
}

func (n *recNext) Commit(ctx context.Context) bool {
	n.commits++
	if n.calls == 0 {
		n.t.Error("Commit before Call")
	}
	if ctx.Err() != nil {
		return false
	}
	return n.commit == nil || n.commit()
}

func returning(res any, err error) func(context.Context) (any, error) {
	return func(context.Context) (any, error) { return res, err }
}

// timedOut is a result that answers normally but audits as a timeout, as
// tools.BashResult does after killing a command.
type timedOut struct{}

func (timedOut) AuditOutcome() string { return OutcomeTimeout }

// TestRunLabelsOutcomes: each way a tool can end gives its answer and the
// same outcome on the call's audit row, which stays Allow.
func TestRunLabelsOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		fn         func(context.Context) (any, error)
		kind       AnswerKind
		message    string // AnswerToolError's message
		result     string
		detail     string
		wantResult any // AnswerResult's value
	}{
		{"ok", returning("fine", nil), AnswerResult, "", OutcomeOK, "", "fine"},
		{"result says timeout", returning(timedOut{}, nil), AnswerResult, "", OutcomeTimeout, "", timedOut{}},
		{"tool error", returning(nil, tools.Errorf("file not found: x")), AnswerToolError, "file not found: x", OutcomeToolError, "", nil},
		{"invalid arguments", returning(nil, &tools.ArgError{Msg: "path is required"}), AnswerToolError, "invalid arguments: path is required", OutcomeToolError, "invalid_arguments", nil},
		{"result not encodable", returning(nil, &EncodeError{Err: errors.New("json: unsupported value: NaN")}), AnswerToolError,
			"internal error: the tool's result could not be encoded", OutcomeError, "result_encoding_failed", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, audit := newTestChain(t, Options{})
			n := &recNext{t: t, fn: tt.fn}
			a := c.Run(context.Background(), call(caller("local:ws"), "read_file", `{"path":"a.txt"}`), n)
			if a.Kind != tt.kind || a.Message != tt.message || a.Err != nil || a.Value != tt.wantResult {
				t.Errorf("answer = %+v, want kind %d message %q value %v", a, tt.kind, tt.message, tt.wantResult)
			}
			if n.calls != 1 || n.commits != 1 {
				t.Errorf("Call ran %d times, Commit %d times; want once each", n.calls, n.commits)
			}
			if len(audit.Rows()) != 1 || audit.Rows()[0].Result != ResultAllow {
				t.Fatalf("audit rows = %+v, want one Allow", audit.Rows())
			}
			if o := audit.Outcomes()[1]; o.Result != tt.result || o.Detail != tt.detail {
				t.Errorf("outcome = %+v, want %s (%s)", o, tt.result, tt.detail)
			}
		})
	}
}

// A denied call never reaches its tool, not even the commit: its answer is
// the chain's JSON-RPC error and its row a Deny without an outcome.
func TestRunDenialNeverCallsNext(t *testing.T) {
	for _, tt := range []struct {
		name string
		cl   *Call
		code int
	}{
		{"sandbox", call(caller("local:ws"), "read_file", `{"path":"../x"}`), CodeSandboxViolation},
		{"policy", call(caller("device:phone"), "bash", `{"command":"id"}`), CodePolicyDenied},
		{"unknown tool", call(caller("local:ws"), "nope", `{}`), jsonrpc.CodeInvalidParams},
		{"unauthenticated", call(&Caller{}, "read_file", `{}`), CodeUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, audit := newTestChain(t, Options{}, append(DefaultTrustRows(), TrustEntry{Entity: "device:phone", Level: 1})...)
			n := &recNext{t: t, fn: func(context.Context) (any, error) {
				t.Error("a denied call ran its tool")
				return nil, nil
			}}
			a := c.Run(context.Background(), tt.cl, n)
			if a.Kind != AnswerError || a.Err == nil || a.Err.Code != tt.code {
				t.Fatalf("answer = %+v, want error %d", a, tt.code)
			}
			if n.calls != 0 || n.commits != 0 {
				t.Errorf("denied call: Call %d, Commit %d; want neither", n.calls, n.commits)
			}
			for _, r := range audit.Rows() {
				if r.Result != ResultDeny {
					t.Errorf("row %+v, want Deny", r)
				}
			}
			if len(audit.Outcomes()) != 0 {
				t.Errorf("a denied call recorded outcomes %v", audit.Outcomes())
			}
		})
	}
}

// A panic in the tool is contained: an isError answer that does not carry
// the panic's value, a handler_panic outcome, and the value and stack in
// the log.
func TestRunPanicIsAuditedToolError(t *testing.T) {
	c, audit := newTestChain(t, Options{})
	var logged bytes.Buffer
	c.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	n := &recNext{t: t, fn: func(context.Context) (any, error) {
		var m map[string]int
		m["secret-panic-value"]++ // nil map write: a real runtime panic
		return nil, nil
	}}
	a := c.Run(context.Background(), call(caller("local:ws"), "read_file", `{"path":"a.txt"}`), n)
	if a.Kind != AnswerToolError || a.Message != "internal error in the tool handler; the server logged the details" {
		t.Errorf("answer = %+v", a)
	}
	if n.commits != 1 {
		t.Errorf("Commit ran %d times after a panic, want 1", n.commits)
	}
	if o := audit.Outcomes()[1]; o.Result != OutcomeToolError || o.Detail != "handler_panic" {
		t.Errorf("outcome = %+v, want tool_error (handler_panic)", o)
	}
	if l := logged.String(); !strings.Contains(l, "tool handler panicked") || !strings.Contains(l, "assignment to entry in nil map") ||
		!strings.Contains(l, "run_test.go") || !strings.Contains(l, "tool=read_file") {
		t.Errorf("log lacks the panic, its stack or the tool: %s", l)
	}
}

// os.Root refusing a path while the tool ran is answered -32005 with the
// chain's message and audited as a sandbox violation with its reason.
func TestRunSandboxViolationFromNext(t *testing.T) {
	c, audit := newTestChain(t, Options{})
	v := &sandbox.Violation{Path: "link/x", Reason: "symlink link points outside the workspace root"}
	n := &recNext{t: t, fn: returning(nil, v)}
	a := c.Run(context.Background(), call(caller("local:ws"), "read_file", `{"path":"link/x"}`), n)
	if a.Kind != AnswerError || a.Err == nil || a.Err.Code != CodeSandboxViolation ||
		!strings.HasPrefix(a.Err.Message, `sandbox_violation: "link/x": symlink link points outside`) {
		t.Fatalf("answer = %+v, want -32005", a)
	}
	if d, _ := a.Err.Data.(map[string]any); d["path"] != "link/x" || d["reason"] != v.Reason {
		t.Errorf("data = %v", a.Err.Data)
	}
	if o := audit.Outcomes()[1]; o.Result != OutcomeSandboxViolation || o.Detail != v.Reason {
		t.Errorf("outcome = %+v, want sandbox_violation (%s)", o, v.Reason)
	}
}

// A call cancelled while the chain decided never starts its tool; its row
// (written by then) says cancelled.
func TestRunCancelledBeforeNext(t *testing.T) {
	c, audit := newTestChain(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := &recNext{t: t, fn: func(context.Context) (any, error) {
		t.Error("the tool of a cancelled call started")
		return nil, nil
	}}
	a := c.Run(ctx, call(caller("local:ws"), "read_file", `{"path":"a.txt"}`), n)
	if a.Kind != AnswerCancelled {
		t.Errorf("answer = %+v, want cancelled", a)
	}
	if n.calls != 0 {
		t.Errorf("Call ran %d times", n.calls)
	}
	if len(audit.Rows()) != 1 || audit.Rows()[0].Result != ResultAllow || audit.Outcomes()[1].Result != OutcomeCancelled {
		t.Errorf("rows %+v, outcomes %v; want one Allow row with outcome cancelled", audit.Rows(), audit.Outcomes())
	}
}

// A tool that returns a result (or an error) after its call was cancelled
// is answered and audited as cancelled: the commit, not the tool, decides.
// The row still says what a tool that ran to its end did (a command that
// ran is not recorded as one that did not); a tool whose context the
// cancel reached first leaves no detail.
func TestRunCommitLostIsCancelled(t *testing.T) {
	for _, tt := range []struct {
		fn          func(context.Context) (any, error)
		interrupted bool
		detail      string
	}{
		{fn: returning("done anyway", nil), detail: "finished_ok"},
		{fn: returning(nil, &sandbox.Violation{Path: "x", Reason: "r"}), detail: "finished_sandbox_violation"},
		{fn: returning(nil, errors.New("exit 1")), detail: "finished_tool_error"},
		{fn: func(context.Context) (any, error) { panic("late") }, detail: "finished_tool_error"},
		{fn: returning("done anyway", nil), interrupted: true, detail: ""},
	} {
		c, audit := newTestChain(t, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		fn := tt.fn
		if tt.interrupted {
			fn = func(ctx context.Context) (any, error) { cancel(); return tt.fn(ctx) }
		}
		n := &recNext{t: t, fn: fn, commit: func() bool { return false }}
		a := c.Run(ctx, call(caller("local:ws"), "read_file", `{"path":"a.txt"}`), n)
		cancel()
		if a.Kind != AnswerCancelled || a.Value != nil || a.Err != nil || a.Message != "" {
			t.Errorf("answer = %+v, want a bare cancelled", a)
		}
		if o := audit.Outcomes()[1]; o.Result != OutcomeCancelled || o.Detail != tt.detail {
			t.Errorf("outcome = %+v, want cancelled with detail %q", o, tt.detail)
		}
	}
}

// An audit log that cannot be written refuses the call before its tool.
func TestRunAuditFailureNeverCallsNext(t *testing.T) {
	c, audit := newTestChain(t, Options{})
	audit.fail = errors.New("disk full")
	n := &recNext{t: t, fn: func(context.Context) (any, error) {
		t.Error("a call without an audit row ran its tool")
		return nil, nil
	}}
	a := c.Run(context.Background(), call(caller("local:ws"), "read_file", `{"path":"a.txt"}`), n)
	if a.Kind != AnswerError || a.Err.Code != jsonrpc.CodeInternalError || n.calls != 0 {
		t.Errorf("answer = %+v, calls %d", a, n.calls)
	}
}
