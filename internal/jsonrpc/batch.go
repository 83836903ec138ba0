package jsonrpc

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Batch is a JSON array of messages. JSON-RPC batches exist in MCP protocol
// versions before 2025-06-18 only; whether one is accepted is the session's
// decision (it knows the version), so a batch is parsed whole and handed on
// like any message.
type Batch struct {
	// Err is set when the array as a whole cannot be used: not valid JSON
	// (-32700) or empty (-32600). Items is then nil.
	Err *Error
	// Items are the array's members in order, each parsed on its own.
	Items []BatchItem
}

// BatchItem is one member of a batch: a message, or why it was refused.
type BatchItem struct {
	Msg Message
	Err *ParseError
}

// ParseBatch parses a JSON array of messages (IsBatch reports one). Each
// member gets the checks Parse makes.
func ParseBatch(data []byte) *Batch {
	if !jsontext.Value(data).IsValid() {
		return &Batch{Err: NewError(CodeParseError, "parse error: the batch is not valid JSON")}
	}
	var items []jsontext.Value
	if err := json.Unmarshal(data, &items); err != nil {
		return &Batch{Err: NewError(CodeInvalidRequest, "invalid request: "+err.Error())}
	}
	if len(items) == 0 {
		return &Batch{Err: NewError(CodeInvalidRequest, "invalid request: empty batch")}
	}
	b := &Batch{Items: make([]BatchItem, len(items))}
	for i, it := range items {
		b.Items[i].Msg, b.Items[i].Err = Parse(it)
	}
	return b
}

// ParseAny parses what a peer sent as one unit (a line, an HTTP body): a
// batch when it is a JSON array, else a single message.
func ParseAny(data []byte) (Message, *ParseError) {
	if IsBatch(data) {
		return Message{Batch: ParseBatch(data)}, nil
	}
	return Parse(data)
}
