package mcp

import (
	"bytes"
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/support/jsonenc"
	"github.com/clawde/clawd/internal/tools"
)

// appendToolResult encodes res in the MCP shape: the tool's output object as
// structuredContent and, for clients that read only content, as compact
// JSON text. An upstream server's *tools.CallResult is not wrapped again:
// appendCallResult writes it as it came.
func appendToolResult(id jsonrpc.ID, res any, modern bool) ([]byte, error) {
	const head = `{"jsonrpc":"2.0","id":`
	if r, ok := res.(*tools.CallResult); ok {
		return appendCallResult(id, r, modern)
	}
	if a, ok := res.(tools.JSONAppender); ok {
		// Encode the object once, straight into the response, as
		// structuredContent; the text content quotes those same bytes.
		// (Member order does not matter in JSON; this saves a copy of a
		// result that can be megabytes.)
		b := make([]byte, 0, a.JSONSizeHint()*9/4+len(head)+len(id.Raw())+128)
		b = append(b, head...)
		b = append(b, id.Raw()...)
		b = append(b, `,"result":{`...)
		b = appendResultType(b, modern)
		b = append(b, `"structuredContent":`...)
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
	b := make([]byte, 0, 2*len(obj)+len(obj)/8+120)
	b = append(b, head...)
	b = append(b, id.Raw()...)
	b = append(b, `,"result":{`...)
	b = appendResultType(b, modern)
	b = append(b, `"content":[{"type":"text","text":`...)
	b = jsonenc.AppendBytes(b, obj)
	b = append(b, `}],"structuredContent":`...)
	b = append(b, obj...)
	b = append(b, `,"isError":false}}`...)
	return b, nil
}

// appendToolError encodes an isError result with a plain message.
func appendToolError(id jsonrpc.ID, msg string, modern bool) []byte {
	b := make([]byte, 0, len(msg)+120)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.Raw()...)
	b = append(b, `,"result":{`...)
	b = appendResultType(b, modern)
	b = append(b, `"content":[{"type":"text","text":`...)
	b = jsonenc.AppendStringChecked(b, msg)
	b = append(b, `}],"isError":true}}`...)
	return b
}

// appendCallResult writes an upstream CallToolResult as the response's
// result: its content items, structuredContent, isError and _meta as the
// upstream server sent them. Each member is checked to be one valid JSON
// value of its kind (tools.CallResult.Check) and re-encoded compact, so a
// hostile or broken server cannot end the result object early, add
// members to the response, or put a newline into a stream transport's
// line framing; the values themselves are passed through unchanged.
func appendCallResult(id jsonrpc.ID, r *tools.CallResult, modern bool) ([]byte, error) {
	if r == nil {
		return nil, errors.New("the tool returned a nil result")
	}
	if err := r.Check(); err != nil {
		return nil, err
	}
	size := len(r.Content) + len(r.StructuredContent) + len(r.Meta) + len(id.Raw()) + 120
	b := make([]byte, 0, size)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.Raw()...)
	b = append(b, `,"result":{`...)
	b = appendResultType(b, modern)
	b = append(b, `"content":`...)
	var err error
	if b, err = appendMember(b, r.Content); err != nil {
		return nil, errors.New("upstream tool result: content: " + err.Error())
	}
	if len(r.StructuredContent) > 0 && r.StructuredContent.Kind() != 'n' {
		b = append(b, `,"structuredContent":`...)
		if b, err = appendMember(b, r.StructuredContent); err != nil {
			return nil, errors.New("upstream tool result: structuredContent: " + err.Error())
		}
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	} else {
		b = append(b, `,"isError":false`...)
	}
	if len(r.Meta) > 0 && r.Meta.Kind() != 'n' {
		b = append(b, `,"_meta":`...)
		if b, err = appendMember(b, r.Meta); err != nil {
			return nil, errors.New("upstream tool result: _meta: " + err.Error())
		}
	}
	return append(b, "}}"...), nil
}

// appendMember appends v, a member of a checked CallResult (valid JSON):
// as it is when it holds no line break, else compacted. A raw CR or LF
// (whitespace between tokens; never inside a JSON string) would end the
// answer's line for a client reading lines, and some split at a lone CR.
// Other whitespace is left: compacting a result that can be megabytes costs
// a pass over it on every call.
func appendMember(b []byte, v jsontext.Value) ([]byte, error) {
	if bytes.IndexByte(v, '\n') < 0 && bytes.IndexByte(v, '\r') < 0 {
		return append(b, v...), nil
	}
	return jsontext.AppendFormat(b, v)
}

// appendResultType writes the 2026-07-28 result's first member,
// "resultType":"complete", followed by a comma; legacy results carry none.
func appendResultType(b []byte, modern bool) []byte {
	if !modern {
		return b
	}
	return append(b, `"resultType":"complete",`...)
}
