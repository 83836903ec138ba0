package chain

import "github.com/clawde/clawd/internal/tools"

// Policy reasons (the audit row's reason column).
const (
	ReasonToolDisabled  = "tool_disabled_in_config"
	ReasonStubAllow     = "policy_stub_allow"
	ReasonExplicitAllow = "explicit_tool_allow"
	ReasonExplicitDeny  = "explicit_tool_deny"
	ReasonLevelAllow    = "trust_level_default_allow"
	ReasonLevelTooLow   = "trust_level_too_low"
	ReasonUnknownHint   = "unknown_permission_hint"
)

// Policy is step 3 for a known entity. A tool switched off in config is
// refused whatever the mode; policy_stub_mode turns the engine into the
// spec's AllowAll stub; otherwise Evaluate decides.
func Policy(opts Options, e TrustEntry, spec *tools.Spec) (allow bool, reason string) {
	if opts.DisabledTools[spec.Name] {
		return false, ReasonToolDisabled
	}
	if opts.PolicyStubMode {
		// P1: AllowAll stub — replace in W14-T02 (spec section 9). clawd
		// ships the real engine below and keeps the stub only behind
		// policy_stub_mode = true, which defaults to false.
		return true, ReasonStubAllow
	}
	return Evaluate(e, spec)
}

// Evaluate is the deny-by-default policy engine (spec section 4, step 3):
// an explicit per-tool permission in the entity's row decides; otherwise the
// trust-level table by the tool's permission hint (level 1 read; 2 adds
// write and execute; 3 adds upstream; 0 nothing). A hint the table does not
// know is refused unless explicitly allowed.
func Evaluate(e TrustEntry, spec *tools.Spec) (allow bool, reason string) {
	switch e.Perms[spec.Name] {
	case PermAllow:
		return true, ReasonExplicitAllow
	case PermDeny:
		return false, ReasonExplicitDeny
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
