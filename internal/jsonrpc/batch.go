package jsonrpc

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"
)

// Batch is a JSON array of messages. JSON-RPC batches exist in MCP protocol
// versions before 2025-06-18 only; whether one is accepted is the session's
// decision (it knows the version), so a batch is parsed and handed on like
// any message.
type Batch struct {
	// Err is set when the array as a whole cannot be used: not valid JSON
	// (-32700) or empty (-32600). Items is then nil.
	Err *Error
	// Len is the number of the array's members.
	Len int
	// Items are the array's members in order, each parsed on its own; nil
	// when there are more than MaxBatchItems (the batch is refused whole).
	Items []BatchItem
}

// MaxBatchItems is the most messages a batch may carry. A longer one is
// only counted, never parsed member by member: parsing a million tiny
// members of a 3 MB line cost about 100 times the line in allocations, for
// a batch that is refused anyway.
const MaxBatchItems = 64

// BatchItem is one member of a batch: a message, or why it was refused.
type BatchItem struct {
	Msg Message
	Err *ParseError
}

// ParseBatch parses a JSON array of messages (IsBatch reports one). Each
// member gets the checks Parse makes, when there are at most MaxBatchItems.
func ParseBatch(data []byte) *Batch {
	// Duplicate names are left to each member's Parse, which refuses them
	// with -32600 as it would the member alone.
	if !jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true)) {
		return &Batch{Err: NewError(CodeParseError, "parse error: the batch is not valid JSON")}
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return &Batch{Err: NewError(CodeInvalidRequest, "invalid request: a batch must be a JSON array")}
	}
	var items []jsontext.Value
	n := 0
	for dec.PeekKind() != ']' {
		var err error
		if n < MaxBatchItems {
			var v jsontext.Value
			if v, err = dec.ReadValue(); err == nil {
				items = append(items, bytes.Clone(v))
			}
		} else {
			err = dec.SkipValue()
		}
		if err != nil {
			return &Batch{Err: NewError(CodeInvalidRequest, "invalid request: "+err.Error())}
		}
		n++
	}
	if n == 0 {
		return &Batch{Err: NewError(CodeInvalidRequest, "invalid request: empty batch")}
	}
	if n > MaxBatchItems {
		return &Batch{Len: n}
	}
	b := &Batch{Len: n, Items: make([]BatchItem, n)}
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
