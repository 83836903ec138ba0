package builtin

import "github.com/go-json-experiment/json/jsontext"

// The input and output schemas below are the clawde MCP server spec's, byte
// for byte in content; tools/list advertises them unchanged. bash's output
// adds timed_out (docs/tools.md).

var bashInputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "command": { "type": "string", "description": "Shell command string" },
    "working_dir": { "type": "string", "description": "Optional subdirectory within workspace root; defaults to workspace root" },
    "timeout_ms": { "type": "integer", "default": 2000, "description": "Execution timeout in milliseconds; default 2000 (the server's tool_timeout_ms), at most 600000" }
  },
  "required": ["command"]
}`)

var bashOutputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "exit_code": { "type": "integer" },
    "stdout": { "type": "string" },
    "stderr": { "type": "string" },
    "truncated": { "type": "boolean", "description": "True if output exceeded the 8 KiB cap" },
    "timed_out": { "type": "boolean", "description": "True if the command was killed at its timeout (exit_code is then 124)" }
  },
  "required": ["exit_code", "stdout", "stderr"]
}`)

var readFileInputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "path": { "type": "string", "description": "File path relative to workspace root, or absolute path within workspace" },
    "encoding": { "type": "string", "enum": ["utf8", "base64"], "default": "utf8" }
  },
  "required": ["path"]
}`)

var readFileOutputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "content": { "type": "string" },
    "size_bytes": { "type": "integer" },
    "encoding": { "type": "string" },
    "truncated": { "type": "boolean" }
  },
  "required": ["content", "size_bytes", "encoding"]
}`)

var writeFileInputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "path": { "type": "string", "description": "File path relative to workspace root" },
    "content": { "type": "string" },
    "encoding": { "type": "string", "enum": ["utf8", "base64"], "default": "utf8" },
    "create_parents": { "type": "boolean", "default": false }
  },
  "required": ["path", "content"]
}`)

var writeFileOutputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "bytes_written": { "type": "integer" },
    "path": { "type": "string", "description": "Canonicalized absolute path written" }
  },
  "required": ["bytes_written", "path"]
}`)

var listDirInputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "path": { "type": "string", "description": "Directory path relative to workspace root; defaults to workspace root" },
    "recursive": { "type": "boolean", "default": false },
    "include_hidden": { "type": "boolean", "default": false },
    "max_depth": { "type": "integer", "default": 3 }
  }
}`)

var listDirOutputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "entries": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "name": { "type": "string" },
          "path": { "type": "string" },
          "kind": { "type": "string", "enum": ["file", "dir", "symlink"] },
          "size_bytes": { "type": "integer" },
          "modified_at": { "type": "string", "format": "date-time" }
        }
      }
    },
    "total": { "type": "integer" },
    "truncated": { "type": "boolean" }
  },
  "required": ["entries", "total"]
}`)

var searchInputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "query": { "type": "string", "description": "Search term or regex pattern" },
    "path": { "type": "string", "description": "Root directory to search; defaults to workspace root" },
    "glob": { "type": "string", "description": "File glob filter, e.g. '*.rs'" },
    "is_regex": { "type": "boolean", "default": false },
    "case_sensitive": { "type": "boolean", "default": false },
    "max_results": { "type": "integer", "default": 50 }
  },
  "required": ["query"]
}`)

var searchOutputSchema = jsontext.Value(`{
  "type": "object",
  "properties": {
    "matches": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "file": { "type": "string" },
          "line": { "type": "integer" },
          "col": { "type": "integer" },
          "text": { "type": "string", "description": "Matching line content" }
        }
      }
    },
    "total_matches": { "type": "integer" },
    "truncated": { "type": "boolean" }
  },
  "required": ["matches", "total_matches"]
}`)

// compact returns v without insignificant whitespace; a schema that fails
// to compact is returned as written (TestSchemasAreValid catches that).
func compact(v jsontext.Value) jsontext.Value {
	c := v.Clone()
	if err := c.Compact(); err != nil {
		return v
	}
	return c
}
