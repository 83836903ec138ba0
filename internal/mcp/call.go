package mcp

import (
	"context"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
)

type callParams struct {
	Name      *string        `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Meta      jsontext.Value `json:"_meta"`
}

// callTool decodes one tools/call, hands it to the chain (which decides,
// runs the tool through toolCall and audits how it ended) and encodes the
// answer; it returns nil when a cancelled call must not be answered.
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
	t := &toolCall{s: s, id: msg.ID, call: chain.Call{Caller: s.caller, Entry: entry, ToolName: *p.Name, Args: p.Arguments, RequestID: msg.ID.Raw()}}
	switch a := s.srv.Chain.Run(ctx, &t.call, t); a.Kind {
	case chain.AnswerError:
		return jsonrpc.AppendError(nil, msg.ID, a.Err)
	case chain.AnswerCancelled:
		return s.cancelledResponse(msg.ID)
	case chain.AnswerToolError:
		return appendToolError(msg.ID, a.Message)
	}
	return t.resp
}

// toolCall is one tools/call on its way through the chain: the chain's view
// of it and the protocol's side that chain.Run calls back (chain.Next), in
// the one allocation a call needs anyway.
type toolCall struct {
	call chain.Call
	s    *Session
	id   jsonrpc.ID
	resp []byte // the encoded result, set by Call
}

// Call runs the tool and encodes its result, so that a result that cannot
// be encoded is audited as such.
func (t *toolCall) Call(ctx context.Context) (any, error) {
	res, err := t.call.Entry.Tool.Call(ctx, t.call.Args)
	if err != nil {
		return res, err
	}
	if t.resp, err = appendToolResult(t.id, res); err != nil {
		return res, &chain.EncodeError{Err: err}
	}
	return res, nil
}

// Commit asks the inflight table whether the call was cancelled before its
// answer could be committed (see inflight.commit).
func (t *toolCall) Commit(ctx context.Context) bool { return t.s.calls.commit(t.id.Key(), ctx) }

func (s *Session) cancelledResponse(id jsonrpc.ID) []byte {
	if !s.opts.ReplyToCancelled {
		return nil
	}
	return appendToolError(id, "cancelled")
}
