package tools

import (
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/support/inplace"
	"github.com/clawde/clawd/internal/support/jsonnames"
)

// CallResult is an MCP CallToolResult that an upstream server returned,
// carried to the client as it came instead of being wrapped again: the
// content items (text, image, audio, resource links...), structuredContent,
// isError and _meta stay raw JSON. A Tool returns a *CallResult from Call;
// the built-in tools keep returning their spec objects, which the MCP layer
// wraps (internal/mcp/result.go).
//
// The MCP layer writes the members verbatim after checking each is one
// valid JSON value of the right kind, compacting one that holds a line
// break, so a result cannot break the response's JSON or its line framing. Members of the upstream
// result other than these four are dropped.
type CallResult struct {
	// Content is the JSON array of content items (required; "[]" if none).
	Content jsontext.Value
	// StructuredContent is a JSON object, or empty when absent.
	StructuredContent jsontext.Value
	IsError           bool
	// Meta is the result's _meta object, or empty when absent.
	Meta jsontext.Value

	// read are the members as ParseCallResult read and checked them; Check
	// does not read a member again while it is still that same slice.
	read [3]jsontext.Value
}

// sameSlice reports whether a and b are the same bytes of memory (not
// merely equal): a member replaced after ParseCallResult is checked anew.
func sameSlice(a, b jsontext.Value) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// AuditOutcome makes an upstream isError result count as a tool error in
// the audit log, like a built-in tool's error.
func (r *CallResult) AuditOutcome() string {
	if r.IsError {
		return "tool_error"
	}
	return ""
}

// ParseCallResult takes an upstream server's CallToolResult (the JSON-RPC
// response's result object) apart, checking what the MCP layer relies on:
// content is an array, structuredContent and _meta are objects, isError a
// boolean (or null). An error names the member that is wrong.
//
// It reads raw once, with the strict decoder (valid UTF-8, no name given
// twice, at any depth, nothing after the object), then refuses names that
// differ only by case, at any depth (jsonnames.Collision); the members it
// returns are slices of raw, not copies: a result can be megabytes, and
// every proxied call comes through here. Members other than the four are
// skipped (still checked).
func ParseCallResult(raw jsontext.Value) (*CallResult, error) {
	dec := inplace.Get(raw)
	defer dec.Release()
	fail := func(err error) (*CallResult, error) {
		return nil, fmt.Errorf("upstream tool result: %w", err)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return fail(err)
	}
	r := &CallResult{}
	switch tok.Kind() {
	case 'n':
		// null: no members, so no content (reported below)
	case '{':
		for dec.PeekKind() != '}' {
			quoted, err := dec.ReadValue() // a name: read as a value, no string made
			if err != nil {
				return fail(err)
			}
			name := memberName(quoted)
			v, err := dec.ReadValue()
			if err != nil {
				return fail(err)
			}
			member := dec.Span(v)
			switch name {
			case "content":
				r.Content = member
			case "structuredContent":
				r.StructuredContent = member
			case "_meta":
				r.Meta = member
			case "isError":
				switch member.Kind() {
				case 't':
					r.IsError = true
				case 'f', 'n':
					r.IsError = false
				default:
					return nil, fmt.Errorf("upstream tool result: isError must be a boolean")
				}
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return fail(err)
		}
	default:
		return nil, fmt.Errorf("upstream tool result: the result must be an object")
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, fmt.Errorf("upstream tool result: more data after the result object")
	}
	if err := r.checkKinds(); err != nil {
		return nil, err
	}
	// As in a request clawd reads: two readers of the result (the
	// client's decoder, a tool of the model's) must not see different
	// values for one name.
	if m := jsonnames.Collision(raw); m != "" {
		return nil, fmt.Errorf("upstream tool result: %s", m)
	}
	r.read = [3]jsontext.Value{r.Content, r.StructuredContent, r.Meta}
	return r, nil
}

// memberName is the name of the quoted member name q (valid JSON) when it
// is one ParseCallResult keeps, else "".
func memberName(q jsontext.Value) string {
	switch n := inplace.Unquoted(q); string(n) { // compared without a copy
	case "content":
		return "content"
	case "structuredContent":
		return "structuredContent"
	case "_meta":
		return "_meta"
	case "isError":
		return "isError"
	}
	return ""
}

// Check reports a member that is not one valid JSON value of its kind. A
// member ParseCallResult read, and nobody replaced since, is valid
// already: only its kind is looked at, so a result is not read twice on
// its way to the answer.
func (r *CallResult) Check() error {
	for i, m := range [...]struct {
		name string
		v    jsontext.Value
	}{{"content", r.Content}, {"structuredContent", r.StructuredContent}, {"_meta", r.Meta}} {
		if len(m.v) > 0 && !sameSlice(m.v, r.read[i]) && !m.v.IsValid() {
			return fmt.Errorf("upstream tool result: %s is not valid JSON", m.name)
		}
	}
	return r.checkKinds()
}

// checkKinds reports a member of the wrong kind (its first byte), or a
// missing content; the members are valid JSON already.
func (r *CallResult) checkKinds() error {
	if err := checkKind("content", r.Content, '[', false); err != nil {
		return err
	}
	if err := checkKind("structuredContent", r.StructuredContent, '{', true); err != nil {
		return err
	}
	return checkKind("_meta", r.Meta, '{', true)
}

func checkKind(name string, v jsontext.Value, kind jsontext.Kind, optional bool) error {
	if len(v) == 0 || (optional && v.Kind() == 'n') {
		if optional {
			return nil
		}
		return fmt.Errorf("upstream tool result: %s is missing", name)
	}
	if v.Kind() != kind {
		want := "an object"
		if kind == '[' {
			want = "an array"
		}
		return fmt.Errorf("upstream tool result: %s must be %s", name, want)
	}
	return nil
}
