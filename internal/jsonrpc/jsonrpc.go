// Package jsonrpc parses and encodes JSON-RPC 2.0 messages strictly.
//
// Strictness is a security property here, not pedantry: Go's encoding/json
// matches member names case-insensitively and lets the last duplicate win, so
// {"name":"read_file","Name":"bash"} could show one tool to a check and run
// another (CVE-2026-27896 in other servers). This package therefore:
//
//   - rejects, in every object at any depth (the envelope, params, _meta,
//     tool arguments), two member names that are equal or differ only by
//     case (-32600, naming both and where);
//   - rejects a member whose name differs from a JSON-RPC member only by case;
//   - accepts only a string or an integer as id, as MCP requires (1.5, 1e3,
//     1.0 and -0.0 are refused with -32600 and a null id), and keeps it as
//     its exact bytes, so a 30-digit number is echoed unchanged;
//   - reports invalid JSON as -32700 with a null id and never panics.
//
// It reads both directions: requests and notifications (what clawd's server
// receives) and responses (what a client, or a gateway reading an upstream
// server, receives: Message.Result or Message.Error). The Connection seam
// (conn.go) and its newline-delimited implementation (stream.go) live here
// too, so the server and an MCP client share one framing.
package jsonrpc

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/support/inplace"
	"github.com/clawde/clawd/internal/support/jsonnames"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object. Data, when non-nil, must marshal to JSON.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return strconv.Itoa(e.Code) + " " + e.Message }

// Errorf-style constructors for the common codes.
func NewError(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// ID is a request id as its exact JSON text (a string or a number literal).
// The zero ID means "absent" (a notification).
type ID struct{ raw string }

// IDFromRaw returns an ID holding the given JSON text; it does not validate it.
func IDFromRaw(raw []byte) ID { return ID{raw: string(raw)} }

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// Raw returns the id's JSON text, or "null" when absent.
func (id ID) Raw() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// String is the id as a user would read it (the JSON text).
func (id ID) String() string { return id.Raw() }

// Key returns a value identity for matching ids across messages: a string id
// "42" and a number id 42 differ, and 1e2 equals 100. Invalid text maps to
// its raw form.
func (id ID) Key() string { return KeyOf([]byte(id.raw)) }

// KeyOf computes the value identity (see ID.Key) of a raw JSON string or number.
func KeyOf(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		v, err := jsontext.AppendUnquote(nil, raw)
		if err != nil {
			return "r:" + string(raw)
		}
		return "s:" + string(v)
	}
	// Fast path: plain integers without sign ambiguity are already canonical
	// unless they carry leading zeros (not valid JSON anyway) or "-0".
	plain := true
	for i, c := range raw {
		if c < '0' || c > '9' {
			if !(i == 0 && c == '-' && len(raw) > 1) {
				plain = false
				break
			}
		}
	}
	if plain && string(raw) != "-0" {
		return "n:" + string(raw)
	}
	return numberKey(raw)
}

// maxKeyZeros bounds the zeros an exponent may add to a number's key.
const maxKeyZeros = 1024

// numberKey is the key of a JSON number written with a fraction, an
// exponent or as -0: the integer it denotes, in the plain form an id takes,
// computed in time and memory linear in raw (a cancel's requestId is
// whatever the client sends: 1e999999 denotes a million digits, and
// big.Rat took seconds over a long mantissa). A number that denotes no
// integer, or one with more than maxKeyZeros trailing zeros, gets a key no
// id has (ids are integers written without an exponent), so it matches
// none.
func numberKey(raw []byte) string {
	none := "r:" + string(raw)
	s, neg := raw, false
	if len(s) > 0 && s[0] == '-' {
		s, neg = s[1:], true
	}
	mant, exp := s, 0
	if i := bytes.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(string(s[i+1:]))
		if err != nil || e > 1<<40 || e < -1<<40 {
			return none
		}
		mant, exp = s[:i], e
	}
	digits := mant
	if i := bytes.IndexByte(mant, '.'); i >= 0 {
		digits = append(append([]byte(nil), mant[:i]...), mant[i+1:]...)
		exp -= len(mant) - i - 1
	}
	digits = bytes.TrimLeft(digits, "0")
	if len(digits) == 0 {
		return "n:0"
	}
	t := bytes.TrimRight(digits, "0")
	exp += len(digits) - len(t)
	if exp < 0 || exp > maxKeyZeros || !isDigits(t) {
		return none
	}
	b := make([]byte, 0, 3+len(t)+exp)
	b = append(b, "n:"...)
	if neg {
		b = append(b, '-')
	}
	b = append(b, t...)
	for range exp {
		b = append(b, '0')
	}
	return string(b)
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Message is one parsed JSON-RPC message: a request (ID set), a notification
// (ID zero, Method set), a response (IsResponse: Result or Error set), or a
// batch (Batch set, every other field zero).
type Message struct {
	ID         ID
	Method     string
	Params     jsontext.Value // nil when absent; otherwise an object
	IsResponse bool
	// Result is a success response's result, as its JSON text (any kind of
	// value, null included). Nil unless IsResponse and Error is nil.
	Result jsontext.Value
	// Error is an error response's error object. Its Data, when present,
	// is a jsontext.Value. A response with Error may have a zero ID: JSON-RPC
	// answers a request whose id could not be read with id null.
	Error *Error
	// Batch is set when the message read was a JSON array (see ParseBatch).
	Batch *Batch
}

// IsNotification reports whether m is a notification (a method without an
// id). A batch is not one.
func (m *Message) IsNotification() bool { return !m.IsResponse && m.Batch == nil && m.ID.IsZero() }

// ParseError describes why a message was rejected, with the id to answer
// with (zero when it could not be read, which encodes as null). A
// Connection's Read returns it as its error for a message it could not
// parse: the reader answers it and reads on.
type ParseError struct {
	ID  ID
	Err *Error
	// TooLarge is set when the message exceeded the connection's size
	// limit and was skipped unread.
	TooLarge bool
}

func (e *ParseError) Error() string { return e.Err.Error() }

// IsBatch reports whether data (after leading whitespace) is a JSON array.
func IsBatch(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '['
}

var memberNames = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// Parse parses a single JSON-RPC message (not a batch) from data.
func Parse(data []byte) (Message, *ParseError) {
	// Invalid JSON anywhere is -32700 with a null id; valid JSON of the
	// wrong shape is -32600 with the id if readable. The decoder reads every
	// member value whole, so reaching the end without an error means the
	// document is valid; no separate validation pass is needed. It leaves
	// duplicate names to CheckNames.
	dec := inplace.Get(data, jsontext.AllowDuplicateNames(true))
	defer dec.Release()
	tok, err := dec.ReadToken()
	if err != nil {
		return Message{}, notJSON()
	}
	if tok.Kind() != '{' {
		if !jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true)) {
			return Message{}, notJSON()
		}
		return Message{}, &ParseError{Err: NewError(CodeInvalidRequest, "invalid request: a message must be a JSON object")}
	}
	var p parser
	for dec.PeekKind() != '}' {
		quoted, err := dec.ReadValue() // the name, quoted
		if err != nil {
			return Message{}, notJSON()
		}
		name := nameOf(quoted) // quoted is void after the next read
		val, err := dec.ReadValue()
		if err != nil {
			return Message{}, notJSON()
		}
		p.member(name, val)
	}
	if _, err := dec.ReadToken(); err != nil {
		return Message{}, notJSON()
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return Message{}, &ParseError{Err: NewError(CodeParseError, "parse error: trailing data after the JSON object")}
	}
	// The document is valid JSON: one pass over its bytes finds equal and
	// case-variant names in every object.
	if nameErr := CheckNames(data); nameErr != nil {
		return p.m, &ParseError{ID: p.m.ID, Err: nameErr}
	}
	p.finish()
	if p.invalid != nil {
		return p.m, &ParseError{ID: p.m.ID, Err: p.invalid}
	}
	return p.m, nil
}

// CheckNames is the -32600 refusal of data (valid JSON) when an object in
// it, at any depth, holds two names that are equal or differ only by case
// (jsonnames.Collision, which says why every object), or nil.
func CheckNames(data []byte) *Error {
	if m := jsonnames.Collision(data); m != "" {
		return NewError(CodeInvalidRequest, "invalid request: "+m)
	}
	return nil
}

// nameOf is the name a quoted member name q (valid JSON) spells: one
// of memberNames without a copy, else a new string.
func nameOf(q jsontext.Value) string {
	b := inplace.Unquoted(q)
	for _, known := range memberNames {
		if string(b) == known {
			return known
		}
	}
	return string(b)
}

// parser collects a message's members and the first reason it is invalid
// (the id is still read after that, so the error can carry it).
type parser struct {
	m           Message
	version     string
	haveVersion bool
	haveID      bool
	haveMethod  bool
	haveResult  bool
	haveError   bool
	// nullID: "id" was null while the message was otherwise still valid.
	// Only an error response may carry it (finish decides).
	nullID  bool
	invalid *Error
}

func (p *parser) fail(msg string) {
	if p.invalid == nil {
		p.invalid = NewError(CodeInvalidRequest, "invalid request: "+msg)
	}
}

func (p *parser) member(name string, val jsontext.Value) {
	switch name {
	case "jsonrpc":
		p.haveVersion = true
		if val.Kind() != '"' {
			p.fail(`"jsonrpc" must be the string "2.0"`)
			return
		}
		p.version = unquote(val)
	case "id":
		if p.haveID {
			return // a duplicate, which CheckNames reports; answer with the first
		}
		p.haveID = true
		switch val.Kind() {
		case '"':
			p.m.ID = ID{raw: string(val)}
		case '0':
			if bytes.ContainsAny(val, ".eE") {
				p.fail(`"id" must be a string or an integer, got ` + clipText(string(val)) + ` (a fraction or exponent is not an integer)`)
				return
			}
			p.m.ID = ID{raw: string(val)}
		case 'n':
			p.nullID = p.invalid == nil
		default:
			p.fail(`"id" must be a string or an integer, got ` + kindWord(val.Kind()))
		}
	case "method":
		p.haveMethod = true
		if val.Kind() != '"' {
			p.fail(`"method" must be a string`)
			return
		}
		p.m.Method = unquote(val)
	case "params":
		if val.Kind() != '{' {
			p.fail(`"params" must be an object`)
			return
		}
		p.m.Params = val.Clone()
	case "result":
		p.haveResult = true
		p.m.Result = val.Clone()
	case "error":
		p.haveError = true
		p.m.Error = p.errorObject(val)
	default:
		for _, known := range memberNames {
			if strings.EqualFold(name, known) {
				p.fail("member " + strconv.Quote(name) + " differs from " + strconv.Quote(known) + " only by case; names are case-sensitive")
			}
		}
	}
}

// finish checks the members as a whole: the version, and request versus
// response shape.
func (p *parser) finish() {
	errorResponse := p.haveError && !p.haveResult && !p.haveMethod
	if p.nullID && !errorResponse {
		// The null id came first: it is the reason given, as when it
		// was refused on sight.
		p.invalid = nil
		p.fail(`"id" must be a string or an integer, got null`)
	}
	switch {
	case p.invalid != nil:
	case !p.haveVersion || p.version != "2.0":
		p.fail(`"jsonrpc" must be "2.0"`)
	case p.haveResult || p.haveError:
		switch {
		case p.haveMethod || p.haveResult == p.haveError:
			p.fail("a response has exactly one of \"result\" and \"error\" and no \"method\"")
		case !p.haveID:
			p.fail(`a response must have an "id" (null only in an error response to an unreadable request)`)
		case p.haveError && p.m.Error == nil:
			p.fail(`a response's "error" must be an object with an integer "code" and a string "message"`)
		default:
			p.m.IsResponse = true
		}
	case !p.haveMethod:
		p.fail(`"method" is required`)
	case p.m.Method == "":
		p.fail(`"method" must not be empty`)
	}
}

// errorObject decodes a response's error member, or returns nil when it is
// not an object with an integer code and a string message.
func (p *parser) errorObject(val jsontext.Value) *Error {
	if val.Kind() != '{' {
		return nil
	}
	var e struct {
		Code    *int           `json:"code"`
		Message *string        `json:"message"`
		Data    jsontext.Value `json:"data"`
	}
	if json.Unmarshal(val, &e, jsontext.AllowDuplicateNames(true)) != nil || e.Code == nil || e.Message == nil {
		return nil
	}
	out := &Error{Code: *e.Code, Message: *e.Message}
	if len(e.Data) > 0 {
		out.Data = e.Data.Clone()
	}
	return out
}

func notJSON() *ParseError {
	return &ParseError{Err: NewError(CodeParseError, "parse error: the message is not valid JSON (one JSON object per line, UTF-8)")}
}

// kindWord names a JSON value kind for an error message.
func kindWord(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "another kind of value"
}

// clipText cuts a client-chosen literal for an error message.
func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func unquote(v jsontext.Value) string { return string(inplace.Unquoted(v)) }
