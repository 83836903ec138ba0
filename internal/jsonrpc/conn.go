package jsonrpc

import (
	"context"
	"errors"
)

// Connection is one JSON-RPC connection to a peer, whatever carries it: the
// seam between a transport's framing and whoever speaks JSON-RPC over it
// (clawd's MCP session today; an MCP client of an upstream server later).
// It follows the official Go SDK's mcp.Connection (Read, Write, Close,
// SessionID) with two differences that keep clawd's hot path cheap: Read
// returns this package's parsed Message, and Write takes one message already
// encoded, since clawd encodes responses straight into bytes.
//
// It lives in jsonrpc rather than mcp because it carries JSON-RPC, not MCP,
// and because both the server (internal/mcp) and a client sit above this
// package on the request path; neither has to import the other for it.
type Connection interface {
	// Read returns the next message. A message that cannot be parsed (or
	// exceeds the connection's size limit) is returned as a *ParseError
	// error: answer it (AppendError with its ID and Err) and read on.
	// io.EOF means the input ended; any other error, that it failed. Read
	// is called by one goroutine at a time.
	Read(ctx context.Context) (Message, error)
	// Write sends one encoded message. Safe for concurrent use; once a
	// write has failed, every later one fails too.
	Write(ctx context.Context, msg []byte) error
	// Close stops the connection; a Read waiting for input returns where
	// the underlying reader can be interrupted. It may be called more than
	// once, concurrently with Read and Write.
	Close() error
	// SessionID is the transport's session id ("" when the transport has
	// none, as stdio and the socket).
	SessionID() string
}

// ReadAhead is implemented by connections that read ahead of what Read
// returned (a buffered stream). A reader uses it to decide whether a request
// may run on the reading goroutine: only when no further input is already
// waiting.
type ReadAhead interface {
	// Buffered reports whether input beyond the last message read is
	// already in memory.
	Buffered() bool
}

// ErrClosed is returned by Read and Write on a closed Connection.
var ErrClosed = errors.New("jsonrpc: connection closed")
