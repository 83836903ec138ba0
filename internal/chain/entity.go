package chain

import (
	"fmt"
	"strings"
)

// EntityKinds are the entity kinds clawd assigns: cc (Claude Code), oc
// (OpenCode), local (any other host on this machine) and device (a paired
// device). docs/authorization.md has the default trust of each.
var EntityKinds = []string{"cc", "oc", "local", "device"}

// maxNameLen bounds entity subjects and tool names (MCP tool names are at
// most 128 characters).
const maxNameLen = 128

// ValidateEntity checks an entity id as the trust registry stores it:
// "<kind>:<subject>" with a known kind and a subject of letters, digits,
// '.', '_' and '-' (a workspace or device id), or "*" for every entity of
// the kind. The error says what is wrong and what a valid one looks like.
func ValidateEntity(e string) error {
	kind, subject, ok := strings.Cut(e, ":")
	if !ok {
		return fmt.Errorf("entity %q: expected KIND:SUBJECT, e.g. local:myproject-1a2b3c4d or cc:*", e)
	}
	known := false
	for _, k := range EntityKinds {
		known = known || k == kind
	}
	if !known {
		return fmt.Errorf("entity %q: unknown kind %q; use one of %s", e, kind, strings.Join(EntityKinds, ", "))
	}
	if subject == "*" {
		return nil
	}
	if subject == "" || len(subject) > maxNameLen || !nameChars(subject) {
		return fmt.Errorf("entity %q: the part after ':' must be '*' or 1-%d letters, digits, '.', '_' or '-' (a workspace id such as myproject-1a2b3c4d)", e, maxNameLen)
	}
	return nil
}

// ValidateToolName checks a tool name for a per-tool permission: 1-128
// letters, digits, '_', '-' and '.' (MCP's tool name characters; upstream
// tools are namespaced as "server__tool").
func ValidateToolName(t string) error {
	if t == "" || len(t) > maxNameLen || !nameChars(t) {
		return fmt.Errorf("tool %q: a tool name is 1-%d letters, digits, '_', '-' or '.'", t, maxNameLen)
	}
	return nil
}

func nameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Permission values in a trust registry row's per-tool JSON. bind is
// written by `clawd trust bind`: it allows the tool and, for upstream
// tools, makes the row's bindings the entity's whole set (Evaluate).
const (
	PermAllow = "allow"
	PermDeny  = "deny"
	PermBind  = "bind"
)

// ServerPatternSuffix ends a permission key that names every tool of one
// upstream server: "SERVER__*".
const ServerPatternSuffix = "__*"

// ValidatePermKey checks a key of a row's per-tool permissions: a tool name
// (ValidateToolName) or SERVER__* for every tool of an upstream server,
// with SERVER an upstream server name (letters, digits, '_' and '-',
// without "__").
func ValidatePermKey(k string) error {
	server, ok := strings.CutSuffix(k, ServerPatternSuffix)
	if !ok {
		if strings.Contains(k, "*") {
			return fmt.Errorf("tool %q: the only pattern is SERVER__* (every tool of one upstream server)", k)
		}
		return ValidateToolName(k)
	}
	if server == "" || len(server) > maxNameLen || strings.Contains(server, "__") || strings.HasSuffix(server, "_") || !nameChars(server) || strings.Contains(server, ".") {
		return fmt.Errorf("pattern %q: SERVER__* needs an upstream server's name before __* (letters, digits, '_' or '-')", k)
	}
	return nil
}

// ValidateServerID checks a provider (MCP server) id for the supply-chain
// allowlist: 1-128 letters, digits, '.', '_' or '-'.
func ValidateServerID(s string) error {
	if s == "" || len(s) > maxNameLen || !nameChars(s) {
		return fmt.Errorf("server id %q: use 1-%d letters, digits, '.', '_' or '-'", s, maxNameLen)
	}
	return nil
}
