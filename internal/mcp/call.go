package mcp

import (
	"context"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonenc"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/tools"
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
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-ctx.Done():
		return s.cancelledResponse(msg.ID)
	}

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

// appendToolResult encodes res in the MCP shape: the spec's object as
// structuredContent and, for clients that read only content, as compact
// JSON text.
func appendToolResult(id jsonrpc.ID, res any) ([]byte, error) {
	const head = `{"jsonrpc":"2.0","id":`
	if a, ok := res.(tools.JSONAppender); ok {
		// Encode the object once, straight into the response, as
		// structuredContent; the text content quotes those same bytes.
		// (Member order does not matter in JSON; this saves a copy of a
		// result that can be megabytes.)
		b := make([]byte, 0, a.JSONSizeHint()*9/4+len(head)+len(id.Raw())+128)
		b = append(b, head...)
		b = append(b, id.Raw()...)
		b = append(b, `,"result":{"structuredContent":`...)
		start := len(b)
		b = a.AppendJSON(b)
		obj := b[start:len(b):len(b)] // capped: appending to b never writes into obj
		b = append(b, `,"content":[{"type":"text","text":`...)
		b = jsonenc.AppendBytes(b, obj) // encoder output: valid UTF-8
		b = append(b, `}],"isError":false}}`...)
		return b, nil
	}
	obj, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 2*len(obj)+len(obj)/8+96)
	b = append(b, head...)
	b = append(b, id.Raw()...)
	b = append(b, `,"result":{"content":[{"type":"text","text":`...)
	b = jsonenc.AppendBytes(b, obj)
	b = append(b, `}],"structuredContent":`...)
	b = append(b, obj...)
	b = append(b, `,"isError":false}}`...)
	return b, nil
}

// appendToolError encodes an isError result with a plain message.
func appendToolError(id jsonrpc.ID, msg string) []byte {
	b := make([]byte, 0, len(msg)+96)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.Raw()...)
	b = append(b, `,"result":{"content":[{"type":"text","text":`...)
	b = jsonenc.AppendStringChecked(b, msg)
	b = append(b, `}],"isError":true}}`...)
	return b
}
