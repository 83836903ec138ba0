package mcp

import (
	"context"
	"io"
	"testing"

	"github.com/clawde/clawd/internal/jsonrpc"
)

// serveStream serves the session over newline-delimited JSON on r and w,
// as the stdio and socket transports do; seen gets the stream.
func (s *Session) serveStream(ctx context.Context, r io.Reader, w io.Writer, seen func(*stream)) error {
	return s.serve(ctx, jsonrpc.NewStream(r, w, s.srv.MessageLimit()), seen)
}

// handleBody answers one HTTP body the way the HTTP transport does: parsed
// once, a parse error answered with its error, the message handed to
// Handle. A busy refusal is returned as its error text.
func handleBody(s *Session, ctx context.Context, body []byte) []byte {
	msg, perr := jsonrpc.ParseAny(body)
	if perr != nil {
		return jsonrpc.AppendError(nil, perr.ID, perr.Err)
	}
	out, err := s.Handle(ctx, &msg)
	if err != nil {
		return []byte(err.Error())
	}
	return out
}

func mustParse(t *testing.T, line string) jsonrpc.Message {
	t.Helper()
	m, perr := jsonrpc.ParseAny([]byte(line))
	if perr != nil {
		t.Fatalf("%s: %v", line, perr)
	}
	return m
}
