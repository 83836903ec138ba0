package chain

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// TrustEntry is one row of the trust registry.
type TrustEntry struct {
	Entity string            // exact entity id or "kind:*"
	Level  int               // 0..3
	Perms  map[string]string // tool name -> "allow" | "deny"
}

// TrustStore looks up the trust registry; exact rows win over "kind:*".
type TrustStore interface {
	Lookup(entity string) (TrustEntry, bool, error)
}

// Options are the live settings the chain reads on every call.
type Options struct {
	PolicyStubMode bool
	DisabledTools  map[string]bool
}

// Chain is the default Authorizer.
type Chain struct {
	WS      *sandbox.Workspace
	Trust   TrustStore
	Options func() Options
}

// Authorize runs the five steps.
func (c *Chain) Authorize(ctx context.Context, call *Call) *Decision {
	start := time.Now()
	d := c.decide(call)
	d.Started = start
	return d
}

func (c *Chain) decide(call *Call) *Decision {
	if call.Caller == nil || call.Caller.AuthMethod == "" {
		return deny(CodeUnauthorized, StepAuth, "not_authenticated", nil)
	}
	entry, ok, err := c.Trust.Lookup(call.Caller.EntityID)
	if err != nil || !ok {
		d := deny(CodeUnknownEntity, StepTrust, "no_trust_registry_row", map[string]any{
			"entity": call.Caller.EntityID,
			"hint":   "clawd trust set " + call.Caller.EntityID + " LEVEL",
		})
		return d
	}
	if call.Entry.Tool == nil {
		d := deny(jsonrpc.CodeInvalidParams, StepLookup, "unknown_tool", nil)
		d.Err.Message = "unknown tool: " + call.ToolName
		d.Err.Data = nil
		d.TrustLevel = entry.Level
		return d
	}
	opts := c.options()
	spec := call.Entry.Tool.Spec()
	if opts.DisabledTools[spec.Name] {
		d := deny(CodePolicyDenied, StepPolicy, "tool_disabled_in_config", nil)
		d.TrustLevel = entry.Level
		return d
	}
	if !opts.PolicyStubMode {
		if allow, reason := Evaluate(entry, spec); !allow {
			d := deny(CodePolicyDenied, StepPolicy, reason, nil)
			d.TrustLevel = entry.Level
			return d
		}
	}
	for _, name := range spec.PathArgs {
		p, ok := stringArg(call.Args, name)
		if !ok {
			continue
		}
		if _, err := c.WS.Check(p); err != nil {
			if v, ok := err.(*sandbox.Violation); ok {
				d := deny(CodeSandboxViolation, StepSandbox, v.Reason, map[string]any{"path": v.Path})
				d.TrustLevel = entry.Level
				return d
			}
			// Not a violation (e.g. a NUL byte): the handler reports it.
		}
	}
	return &Decision{Step: StepHandler, Reason: "trust_level_default_allow", TrustLevel: entry.Level}
}

// Finish records an allowed call's outcome.
func (c *Chain) Finish(call *Call, d *Decision, o Outcome) {}

// Visible reports whether the caller's policy allows the tool.
func (c *Chain) Visible(caller *Caller, e tools.Entry) bool {
	opts := c.options()
	spec := e.Tool.Spec()
	if opts.DisabledTools[spec.Name] {
		return false
	}
	entry, ok, err := c.Trust.Lookup(caller.EntityID)
	if err != nil || !ok {
		return false
	}
	if opts.PolicyStubMode {
		return true
	}
	allow, _ := Evaluate(entry, spec)
	return allow
}

func (c *Chain) options() Options {
	if c.Options == nil {
		return Options{}
	}
	return c.Options()
}

// Evaluate is the deny-by-default policy for a known entity: an explicit
// per-tool permission decides; otherwise the trust-level table by the tool's
// permission hint (level 1 read; 2 adds write and execute; 3 adds upstream).
func Evaluate(e TrustEntry, spec *tools.Spec) (allow bool, reason string) {
	switch e.Perms[spec.Name] {
	case "allow":
		return true, "explicit_tool_allow"
	case "deny":
		return false, "explicit_tool_deny"
	}
	need := RequiredLevel(spec.Permission)
	if e.Level >= need {
		return true, "trust_level_default_allow"
	}
	return false, "trust_level_too_low"
}

// RequiredLevel is the trust level a permission hint needs by default.
func RequiredLevel(p tools.Permission) int {
	switch p {
	case tools.PermRead:
		return 1
	case tools.PermWrite, tools.PermExecute:
		return 2
	}
	return 3
}

// stringArg extracts a top-level string member from tool arguments without
// decoding the rest; a missing or non-string member reports !ok.
func stringArg(args jsontext.Value, name string) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	dec := jsontext.NewDecoder(strings.NewReader(string(args)))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	for dec.PeekKind() == '"' {
		k, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		if k.String() != name {
			if err := dec.SkipValue(); err != nil {
				return "", false
			}
			continue
		}
		v, err := dec.ReadToken()
		if err != nil || v.Kind() != '"' {
			return "", false
		}
		return v.String(), true
	}
	return "", false
}

// MemoryTrust is an in-memory TrustStore, seeded like a fresh registry.
type MemoryTrust struct {
	mu   sync.RWMutex
	rows map[string]TrustEntry
}

// DefaultTrustRows are the rows seeded on first start (DESIGN.md section 3).
func DefaultTrustRows() []TrustEntry {
	return []TrustEntry{
		{Entity: "cc:*", Level: 3},
		{Entity: "oc:*", Level: 3},
		{Entity: "local:*", Level: 2},
	}
}

// NewMemoryTrust returns a store holding rows.
func NewMemoryTrust(rows ...TrustEntry) *MemoryTrust {
	m := &MemoryTrust{rows: map[string]TrustEntry{}}
	for _, r := range rows {
		m.rows[r.Entity] = r
	}
	return m
}

// Lookup finds the exact row, else the "kind:*" row.
func (m *MemoryTrust) Lookup(entity string) (TrustEntry, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if r, ok := m.rows[entity]; ok {
		return r, true, nil
	}
	if i := strings.IndexByte(entity, ':'); i > 0 {
		if r, ok := m.rows[entity[:i]+":*"]; ok {
			return r, true, nil
		}
	}
	return TrustEntry{}, false, nil
}
