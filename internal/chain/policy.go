package chain

import (
	"fmt"
	"strings"

	"github.com/clawde/clawd/internal/tools"
)

// Policy reasons (the audit row's reason column).
const (
	ReasonToolDisabled  = "tool_disabled_in_config"
	ReasonStubAllow     = "policy_stub_allow"
	ReasonExplicitAllow = "explicit_tool_allow"
	ReasonExplicitDeny  = "explicit_tool_deny"
	ReasonLevelAllow    = "trust_level_default_allow"
	ReasonLevelTooLow   = "trust_level_too_low"
	ReasonUnknownHint   = "unknown_permission_hint"
	// ReasonBound: the tool is bound to the entity (clawd trust bind).
	ReasonBound = "bound_tool"
	// ReasonNotBound: the entity has bindings and this upstream tool is
	// not among them.
	ReasonNotBound = "tool_not_bound"
)

// Policy is step 3 for a known entity. A tool switched off in config is
// refused whatever the mode; policy_stub_mode turns the engine into the
// spec's AllowAll stub; otherwise Evaluate decides.
func Policy(opts Options, e TrustEntry, spec *tools.Spec) (allow bool, reason string) {
	if opts.Disabled(spec) {
		return false, ReasonToolDisabled
	}
	if opts.PolicyStubMode {
		// The AllowAll stub an early version of clawd shipped with. clawd
		// keeps it only behind policy_stub_mode = true, which defaults to
		// false: it would let a level-1 entity run bash.
		return true, ReasonStubAllow
	}
	return Evaluate(e, spec)
}

// Disabled reports whether config switches the tool off ([tools] NAME =
// false): by the name it is offered under, or for an upstream tool by its
// plain or hashed name, since the server's listing can rename it from one
// to the other (deniedByOtherName) and a switch must not come undone.
func (o Options) Disabled(spec *tools.Spec) bool {
	if len(o.DisabledTools) == 0 {
		return false
	}
	return o.DisabledTools[spec.Name] || spec.Plain != "" && o.DisabledTools[spec.Plain] || spec.Hashed != "" && o.DisabledTools[spec.Hashed]
}

// Evaluate is the deny-by-default policy engine (step 3 of the chain), and
// the one function that decides both whether tools/list shows a tool to a
// caller (Chain.Visible, Chain.VisibleOf) and whether a call may run (Chain.decide), so the
// two cannot disagree. In order:
//
//  1. a permission for exactly this tool in the entity's row: allow, deny,
//     or bind (allowed: the tool is bound to the entity);
//  2. for an upstream tool (permission hint upstream), a SERVER__* pattern
//     of the row naming the server that offers it (spec.Server, not a
//     prefix of the exposed name, which a rename on collision can change):
//     deny wins over bind and allow;
//     and when the row binds any tool (clawd trust bind), an upstream tool
//     neither bound nor allowed is refused (tool_not_bound): the bindings
//     are then the entity's whole set of upstream tools;
//  3. the trust-level table by the tool's permission hint (level 1 read; 2
//     adds write and execute; 3 adds upstream; 0 nothing). A hint the table
//     does not know is refused unless explicitly allowed.
//
// Built-in tools never reach step 2: their cost is the map lookup of step 1.
func Evaluate(e TrustEntry, spec *tools.Spec) (allow bool, reason string) {
	if deniedByOtherName(e, spec) != "" {
		return false, ReasonExplicitDeny
	}
	switch e.Perms[spec.Name] {
	case PermAllow:
		return true, ReasonExplicitAllow
	case PermDeny:
		return false, ReasonExplicitDeny
	case PermBind:
		return true, ReasonBound
	}
	if spec.Permission == tools.PermUpstream && len(e.Perms) > 0 {
		if allow, reason, decided := evaluateUpstream(e.Perms, spec); decided {
			return allow, reason
		}
	}
	need, ok := RequiredLevel(spec.Permission)
	if !ok {
		return false, ReasonUnknownHint
	}
	if e.Level >= need {
		return true, ReasonLevelAllow
	}
	return false, ReasonLevelTooLow
}

// deniedByOtherName returns the other name of an upstream tool (its plain
// name SERVER__TOOL, or the hashed name a rename gives it) that the row
// denies, or "". The upstream chooses the names it lists: one that adds a
// tool taking the plain name (a case variant that sorts first) renames
// the tool a deny of the plain name was written for, and one that drops
// that tool again gives the plain name back to the tool a deny of the
// hashed name was written for. Neither lifts the deny. Only a deny follows
// a rename; an allow or a binding does not (the tool is then refused until
// one names its current name).
func deniedByOtherName(e TrustEntry, spec *tools.Spec) string {
	if len(e.Perms) == 0 {
		return ""
	}
	for _, n := range [2]string{spec.Plain, spec.Hashed} {
		if n != "" && n != spec.Name && e.Perms[n] == PermDeny {
			return n
		}
	}
	return ""
}

// evaluateUpstream is step 2 of Evaluate for an upstream tool: the row's
// SERVER__* patterns, then its bindings. A pattern matches the server that
// offers the tool (spec.Server; names are unique regardless of case), not
// the exposed name's prefix: a hashed name may have lost the server's name.
func evaluateUpstream(perms map[string]string, spec *tools.Spec) (allow bool, reason string, decided bool) {
	var matched string // the strongest pattern permission that matches
	binds := false
	for key, p := range perms {
		binds = binds || p == PermBind
		if server, ok := strings.CutSuffix(key, ServerPatternSuffix); ok && spec.Server != "" && strings.EqualFold(server, spec.Server) {
			if p == PermDeny || matched == "" || matched == PermAllow && p == PermBind {
				matched = p
			}
		}
	}
	switch {
	case matched == PermDeny:
		return false, ReasonExplicitDeny, true
	case matched == PermBind:
		return true, ReasonBound, true
	case matched == PermAllow:
		return true, ReasonExplicitAllow, true
	case binds:
		return false, ReasonNotBound, true
	}
	return false, "", false
}

// RequiredLevel is the trust level a permission hint needs by default; ok
// is false for a hint the table does not know.
func RequiredLevel(p tools.Permission) (level int, ok bool) {
	switch p {
	case tools.PermRead:
		return 1, true
	case tools.PermWrite, tools.PermExecute:
		return 2, true
	case tools.PermUpstream:
		return 3, true
	}
	return 0, false
}

// policyDenial is step 3's refusal. Its message names the tool, what the
// tool needs, the caller's entity and what its row gives it, and the
// command that would change the decision; data.reason stays the reason code.
func policyDenial(entity string, e TrustEntry, spec *tools.Spec, reason string) *Decision {
	return denyWith(CodePolicyDenied, StepPolicy, reason, PolicySentence(entity, e, spec, reason), nil)
}

// PolicySentence explains a policy refusal in words (see policyDenial).
func PolicySentence(entity string, e TrustEntry, spec *tools.Spec, reason string) string {
	row, rowName := "", entity
	if e.Entity != "" && e.Entity != entity {
		row, rowName = " through the row "+e.Entity, e.Entity
	}
	need, known := RequiredLevel(spec.Permission)
	switch reason {
	case ReasonToolDisabled:
		return fmt.Sprintf("%s is switched off in clawd's config ([tools] %s = false); no trust level can call it until the config switches it on",
			spec.Name, spec.Name)
	case ReasonExplicitDeny:
		if other := deniedByOtherName(e, spec); other != "" {
			return fmt.Sprintf("%s (formerly offered as %s) is denied to %s by the trust registry row %s (--deny %s); `clawd trust set %s %d --allow %s` replaces that deny",
				spec.Name, other, entity, rowName, other, entity, max(e.Level, need), other)
		}
		return fmt.Sprintf("%s is denied to %s by the trust registry row %s (--deny %s); `clawd trust set %s %d --allow %s` would allow it",
			spec.Name, entity, rowName, spec.Name, entity, max(e.Level, need), spec.Name)
	case ReasonLevelTooLow:
		return fmt.Sprintf("%s needs level %d (%s), %s is level %d%s (`clawd trust set %s %d` raises it, `clawd trust set %s %d --allow %s` allows only this tool)",
			spec.Name, need, spec.Permission, entity, e.Level, row, entity, need, entity, e.Level, spec.Name)
	case ReasonNotBound:
		return fmt.Sprintf("%s is not among the tools bound to %s (row %s); `clawd trust bind %s %s` binds it, `clawd trust unbind %s` removes every binding",
			spec.Name, entity, rowName, rowName, spec.Name, rowName)
	case ReasonUnknownHint:
		if !known {
			return fmt.Sprintf("%s has the permission hint %q, which no trust level covers; only an explicit allow lets %s call it (`clawd trust set %s %d --allow %s`)",
				spec.Name, spec.Permission, entity, entity, e.Level, spec.Name)
		}
	}
	return fmt.Sprintf("%s may not call %s (%s)", entity, spec.Name, reason)
}
