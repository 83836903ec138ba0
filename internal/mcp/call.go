package mcp

import (
	"context"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/tools"
)

type callParams struct {
	Name      *string        `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Meta      jsontext.Value `json:"_meta"`
}

// callTool decodes one tools/call on a session (stream or HTTP session),
// hands it to the chain (which decides, runs the tool through toolCall and
// audits how it ended) and encodes the answer; it returns nil when a
// cancelled call must not be answered. A call whose _meta claims a
// protocol version is served statelessly (modernCall); any other needs
// initialize first.
func (s *Session) callTool(ctx context.Context, msg *jsonrpc.Message, cancelled bool) []byte {
	if cancelled {
		return s.cancelledResponse(msg.ID, false)
	}
	own, ok := s.srv.acquireCall(ctx)
	if !ok {
		return s.cancelledResponse(msg.ID, false)
	}
	defer s.srv.releaseCall(own)

	var p callParams
	if err := decodeCallParams(msg.Params, &p); err != nil {
		rerr := jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: "+err.Error())
		if !s.initialized() {
			return jsonrpc.AppendError(nil, msg.ID, rerr)
		}
		x := exchange{caller: s.caller, calls: s.calls, replyCancelled: s.opts.ReplyToCancelled}
		return s.srv.refuseCall(ctx, x, msg, &callParams{}, rerr)
	}
	var rep *reporter
	if len(p.Meta) > 0 {
		// Only a call that carries _meta pays for reading it: the legacy
		// hot path without one is unchanged.
		m, _ := decodeMeta(p.Meta)
		if v, claimed := m.claim(); claimed {
			return s.modernCall(ctx, msg, &p, &m, v)
		}
		if s.initialized() {
			rep = newReporter(m.ProgressToken, s.legacyLogLevel(), s.notifier(ctx))
		}
	} else if s.logSet.Load() {
		rep = newReporter(nil, s.legacyLogLevel(), s.notifier(ctx))
	}
	if !s.initialized() {
		return jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"invalid request: the session is not initialized; send initialize first (or claim a protocol version in _meta)"))
	}
	return s.srv.runCall(ctx, exchange{caller: s.caller, calls: s.calls, replyCancelled: s.opts.ReplyToCancelled}, msg, &p, rep)
}

// exchange is what a call's answer depends on besides the message: who
// calls, where its cancellation is tracked, whether a cancelled call is
// answered, and whether the answer is in the 2026-07-28 shape.
type exchange struct {
	caller         *chain.Caller
	calls          *inflight
	replyCancelled bool
	modern         bool
}

// runCall checks the decoded call and runs it through the chain.
func (srv *Server) runCall(ctx context.Context, x exchange, msg *jsonrpc.Message, p *callParams, rep *reporter) []byte {
	if p.Name == nil {
		return srv.refuseCall(ctx, x, msg, p, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid params: "name" is required`))
	}
	if len(p.Arguments) > 0 && p.Arguments.Kind() != '{' && p.Arguments.Kind() != 'n' {
		return srv.refuseCall(ctx, x, msg, p, jsonrpc.NewError(jsonrpc.CodeInvalidParams, `invalid params: "arguments" must be an object`))
	}
	if p.Arguments.Kind() == 'n' {
		p.Arguments = nil
	}
	if rep != nil {
		// finish runs before the answer is returned, so before it is
		// written: no report of the call can follow its answer.
		ctx = tools.WithReporter(ctx, rep)
		defer rep.finish()
	}
	entry, _ := srv.Registry.Lookup(*p.Name)
	t := &toolCall{calls: x.calls, modern: x.modern, id: msg.ID, call: chain.Call{Caller: x.caller, Entry: entry, ToolName: *p.Name, Args: p.Arguments, RequestID: msg.ID.Raw()}}
	switch a := srv.Chain.Run(ctx, &t.call, t); a.Kind {
	case chain.AnswerError:
		return jsonrpc.AppendError(nil, msg.ID, a.Err)
	case chain.AnswerCancelled:
		return cancelledAnswer(msg.ID, x.replyCancelled, x.modern)
	case chain.AnswerToolError:
		return appendToolError(msg.ID, a.Message, x.modern)
	}
	return t.resp
}

// refuseCall answers a malformed tools/call of a known caller with rerr
// through the chain, which puts the refusal on record (a Deny at step
// params) as it does every call that passed auth.
func (srv *Server) refuseCall(ctx context.Context, x exchange, msg *jsonrpc.Message, p *callParams, rerr *jsonrpc.Error) []byte {
	call := chain.Call{Caller: x.caller, Args: p.Arguments, RequestID: msg.ID.Raw(), Invalid: rerr}
	if p.Name != nil {
		call.ToolName = *p.Name
	}
	if a := srv.Chain.Run(ctx, &call, refusedCall{}); a.Kind == chain.AnswerError && a.Err != nil {
		rerr = a.Err // rerr, or the chain's earlier refusal (unknown entity, audit unavailable)
	}
	return jsonrpc.AppendError(nil, msg.ID, rerr)
}

// refusedCall is the Next of a malformed call, which the chain never runs;
// should an Authorizer run it anyway, it runs nothing.
type refusedCall struct{}

func (refusedCall) Call(context.Context) (any, error) {
	return nil, errors.New("a malformed call is not run")
}
func (refusedCall) Commit(context.Context) bool { return true }

// toolCall is one tools/call on its way through the chain: the chain's view
// of it and the protocol's side that chain.Run calls back (chain.Next), in
// the one allocation a call needs anyway.
type toolCall struct {
	call   chain.Call
	calls  *inflight
	id     jsonrpc.ID
	resp   []byte // the encoded result, set by Call
	modern bool
}

// Call runs the tool and encodes its result, so that a result that cannot
// be encoded is audited as such.
func (t *toolCall) Call(ctx context.Context) (any, error) {
	res, err := t.call.Entry.Tool.Call(ctx, t.call.Args)
	if err != nil {
		return res, err
	}
	if t.resp, err = appendToolResult(t.id, res, t.modern); err != nil {
		return res, &chain.EncodeError{Err: err}
	}
	return res, nil
}

// Commit asks the inflight table whether the call was cancelled before its
// answer could be committed (see inflight.commit).
func (t *toolCall) Commit(ctx context.Context) bool { return t.calls.commit(t.id.Key(), ctx) }

func (s *Session) cancelledResponse(id jsonrpc.ID, modern bool) []byte {
	return cancelledAnswer(id, s.opts.ReplyToCancelled, modern)
}

func cancelledAnswer(id jsonrpc.ID, reply, modern bool) []byte {
	if !reply {
		return nil
	}
	return appendToolError(id, "cancelled", modern)
}

type notifyKey struct{}

// WithNotify returns ctx carrying the function that writes the
// notifications preceding the answer of the message handled with it (a
// Streamable HTTP POST answered as an SSE stream). Session.Handle sends a
// legacy call's progress and log messages through it; without it they
// are dropped on HTTP (a stream session writes them to its connection).
func WithNotify(ctx context.Context, notify func(msg []byte)) context.Context {
	return context.WithValue(ctx, notifyKey{}, notify)
}

// notifier is where a legacy call's reports go: the request's own channel
// (WithNotify), else the session's connection (nil on HTTP: dropped).
func (s *Session) notifier(ctx context.Context) func([]byte) {
	if n, ok := ctx.Value(notifyKey{}).(func([]byte)); ok && n != nil {
		return n
	}
	return s.push
}
