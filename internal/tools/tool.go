// Package tools is the tool contract: what a tool is (Spec, Tool, its
// errors and result types), what a provider of tools is (Provider, Origin,
// its lifecycle) and the Registry that indexes the tools of every provider.
// It holds no tool: the five built-in tools live in internal/builtin, and
// upstream MCP servers plug in as further providers. The chain depends only
// on this package, so deciding about a call never links in a tool.
//
// A tool knows nothing of transports, sessions or authorization: it receives
// validated-by-itself arguments and the workspace, and returns either a
// result object (the tool's output object, as docs/tools.md documents it)
// or an error. Deciding who may
// call it is the chain's job (internal/chain).
package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/sandbox"
)

// Permission is a tool's permission hint (read, write, execute;
// docs/authorization.md); the policy engine's
// trust-level table is keyed by it.
type Permission string

const (
	PermRead    Permission = "read"
	PermWrite   Permission = "write"
	PermExecute Permission = "execute"
	// PermUpstream marks tools of upstream MCP servers (trust level 3).
	PermUpstream Permission = "upstream"
)

// Spec describes a tool for discovery and for the chain.
type Spec struct {
	Name         string
	Title        string
	Description  string
	Permission   Permission
	InputSchema  jsontext.Value
	OutputSchema jsontext.Value
	// PathArgs names the top-level string arguments that are workspace paths;
	// the chain's sandbox step checks each before the handler runs.
	PathArgs []string
	// StateAccess says how the tool uses its path arguments, so the chain's
	// sandbox step can refuse one that reaches clawd's own state before the
	// tool runs (sandbox.Workspace.CheckState). The tool still checks what
	// it actually opened.
	StateAccess sandbox.Access
	// Server is the upstream server that offers the tool ("" for clawd's
	// own). Policy patterns (SERVER__*) match it, not the exposed name,
	// which a hash may have shortened past the server's name.
	Server string
	// Plain is an upstream tool's plain name, SERVER__TOOL, which is Name
	// unless the tool was renamed (a collision, the length limit, a
	// character outside [A-Za-z0-9_-]). The server decides what it lists,
	// so it can rename one of its tools (a new tool whose name differs
	// only in case and sorts first takes the plain name): a deny written
	// for the plain name still applies to the tool it named (chain.Evaluate).
	Plain string
	// Hashed is the name an upstream tool gets when it is renamed
	// (SERVER__TOOL shortened, plus 8 hex digits of a hash of the server
	// and tool names), whether or not it has that name now. The server can
	// also undo a rename (drop the tool that took the plain name): a deny
	// written for the hashed name still applies to the tool it named.
	Hashed string
}

// Tool is one callable tool.
type Tool interface {
	Spec() *Spec
	// Call runs the tool. It returns its output object (marshalled to
	// JSON as structuredContent) or an error: *ToolError and *ArgError become
	// an isError result the model can read, *sandbox.Violation becomes
	// JSON-RPC -32005, context errors mean the call was cancelled.
	Call(ctx context.Context, args jsontext.Value) (any, error)
}

// JSONAppender is implemented by result objects on hot paths (read_file)
// that encode themselves faster than reflection can. AppendJSON must produce
// exactly what json.Marshal would.
type JSONAppender interface {
	AppendJSON(dst []byte) []byte
	// JSONSizeHint estimates the encoded size, to size the buffer once.
	JSONSizeHint() int
}

// ToolError is a failure the model should see as an isError result, such as
// "file not found".
type ToolError struct{ Msg string }

func (e *ToolError) Error() string { return e.Msg }

// Errorf returns a *ToolError with a formatted message.
func Errorf(format string, a ...any) error { return &ToolError{Msg: fmt.Sprintf(format, a...)} }

// ArgError reports arguments that do not fit the tool's input schema.
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return "invalid arguments: " + e.Msg }

// DecodeArgs decodes tool arguments strictly into v: member names are
// case-sensitive, duplicates and unknown members are rejected, and types
// must match. Absent arguments decode as an empty object.
func DecodeArgs(args jsontext.Value, v any) error {
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	if err := json.Unmarshal(args, v, json.RejectUnknownMembers(true)); err != nil {
		return &ArgError{Msg: describeDecodeError(err)}
	}
	return nil
}

func describeDecodeError(err error) string {
	var se *json.SemanticError
	if errors.As(err, &se) {
		name := string(se.JSONPointer)
		switch {
		case se.Err != nil && se.Err.Error() == "unknown object member name":
			return fmt.Sprintf("unknown argument %s", quotePointer(name))
		case se.GoType != nil && name != "":
			return fmt.Sprintf("argument %s has the wrong type (want %s)", quotePointer(name), kindWord(se.GoType.Kind().String()))
		}
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return syn.Err.Error()
	}
	return err.Error()
}

func quotePointer(p string) string {
	if len(p) > 0 && p[0] == '/' {
		p = p[1:]
	}
	return fmt.Sprintf("%q", p)
}

func kindWord(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "int32", "uint", "uint64":
		return "an integer"
	case "ptr":
		return "a value"
	}
	return k
}
