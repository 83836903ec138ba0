package tools

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// CallResult is an MCP CallToolResult that an upstream server returned,
// carried to the client as it came instead of being wrapped again: the
// content items (text, image, audio, resource links...), structuredContent,
// isError and _meta stay raw JSON. A Tool returns a *CallResult from Call;
// the built-in tools keep returning their spec objects, which the MCP layer
// wraps (internal/mcp/result.go).
//
// The MCP layer writes the members verbatim after checking each is one
// valid JSON value of the right kind and compacting it, so a result cannot
// break the response's JSON or its line framing. Members of the upstream
// result other than these four are dropped.
type CallResult struct {
	// Content is the JSON array of content items (required; "[]" if none).
	Content jsontext.Value
	// StructuredContent is a JSON object, or empty when absent.
	StructuredContent jsontext.Value
	IsError           bool
	// Meta is the result's _meta object, or empty when absent.
	Meta jsontext.Value
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
// content is an array, structuredContent and _meta are objects. An error
// names the member that is wrong.
func ParseCallResult(raw jsontext.Value) (*CallResult, error) {
	var m struct {
		Content           jsontext.Value `json:"content"`
		StructuredContent jsontext.Value `json:"structuredContent"`
		IsError           bool           `json:"isError"`
		Meta              jsontext.Value `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("upstream tool result: %w", err)
	}
	r := &CallResult{Content: m.Content, StructuredContent: m.StructuredContent, IsError: m.IsError, Meta: m.Meta}
	if err := r.Check(); err != nil {
		return nil, err
	}
	return r, nil
}

// Check reports a member that is not one valid JSON value of its kind.
func (r *CallResult) Check() error {
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
	if !v.IsValid() {
		return fmt.Errorf("upstream tool result: %s is not valid JSON", name)
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
