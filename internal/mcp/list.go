package mcp

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/tools"
)

// toolJSON is a tool as tools/list describes it.
type toolJSON struct {
	Name         string         `json:"name"`
	Title        string         `json:"title,omitzero"`
	Description  string         `json:"description,omitzero"`
	InputSchema  jsontext.Value `json:"inputSchema"`
	OutputSchema jsontext.Value `json:"outputSchema,omitzero"`
	Annotations  annotations    `json:"annotations"`
}

// annotations carry a tool's permission hint as MCP tool hints: read ->
// readOnlyHint; write and execute -> destructiveHint.
type annotations struct {
	Title           string `json:"title,omitzero"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

func describe(spec *tools.Spec) toolJSON {
	return toolJSON{
		Name:         spec.Name,
		Title:        spec.Title,
		Description:  spec.Description,
		InputSchema:  spec.InputSchema,
		OutputSchema: spec.OutputSchema,
		Annotations: annotations{
			Title:           spec.Title,
			ReadOnlyHint:    spec.Permission == tools.PermRead,
			DestructiveHint: spec.Permission != tools.PermRead,
			// bash can reach anything the user can; the file tools cannot
			// leave the workspace.
			OpenWorldHint: spec.Permission == tools.PermExecute || spec.Permission == tools.PermUpstream,
		},
	}
}

func (s *Session) listTools() (jsontext.Value, *jsonrpc.Error) {
	visible := s.srv.VisibleTools(s.caller)
	list := make([]toolJSON, 0, len(visible))
	for _, e := range visible {
		list = append(list, describe(e.Tool.Spec()))
	}
	b, err := json.Marshal(struct {
		Tools []toolJSON `json:"tools"`
	}{list})
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "internal error: cannot encode the tool list")
	}
	return b, nil
}
