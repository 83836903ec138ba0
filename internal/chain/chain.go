package chain

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
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

// CredentialStore says whether a per-client credential (`clawd token issue`)
// is still valid; the chain asks on every call of a caller that presented
// one, so revoking it takes effect at once.
type CredentialStore interface {
	CredentialActive(id string) (bool, error)
}

// Options are the live settings the chain reads on every call.
type Options struct {
	PolicyStubMode bool
	DisabledTools  map[string]bool
}

// Chain is the default Authorizer: the five steps of docs/authorization.md
// plus the audit log. Each step is a small function of its own (trust,
// policy, supply, sandbox) so it can be tested alone; decide runs them in
// order and the first refusal wins.
type Chain struct {
	WS    *sandbox.Workspace
	Trust TrustStore
	// Allow is the supply-chain allowlist. Nil refuses every provider that
	// names a binary (built-in tools still pass).
	Allow Allowlist
	// Egress is the egress allowlist. Nil refuses every remote provider.
	Egress Egress
	// Credentials checks per-client credentials. Nil refuses every caller
	// that presented one (fail closed).
	Credentials CredentialStore
	// Audit stores every decision past step 1. Nil records nothing (used
	// only by unit tests of the steps; the daemon always sets it).
	Audit   AuditLog
	Options func() Options
	Logger  *slog.Logger
	// SupplyFreshFor is how long the supply-chain step may reuse its look
	// at a provider's executable and script (a stat of each path, then the
	// cached hash of that file version) for further calls. Zero looks on
	// every call. The daemon sets store.FreshFor, the window in which a
	// registry change may also not yet be seen: a binary or script replaced
	// on disk refuses every call decided that long after the replacement.
	// The server's running process read its code before either; a respawn
	// checks the very file it executes, never through this window.
	SupplyFreshFor time.Duration
	// Secrets, if set, returns values known to be secret, longest first
	// (the resolved env and header values of the upstream servers): an
	// audit row's argument summary masks each wherever it quotes one whole
	// and as written (not encoded), whatever its shape.
	Secrets func() []string

	hashes   HashCache
	lastEval atomic.Int64 // nanoseconds
}

// Hashes is the chain's cache of executable hashes, which the upstream
// manager shares for its spawn-time checks: a server's interpreter is then
// read once for both the spawn and the per-call check.
func (c *Chain) Hashes() *HashCache { return &c.hashes }

// Authorize runs the five steps (the first part of Run) and, for every call
// that passed step 1, records the decision's audit row durably (AuditLog)
// before it returns: a denied call's row is on record before the error is
// sent, an allowed call's row before its handler runs (so even a command
// that kills clawd leaves a record). When the row cannot be written the call is refused (fail closed).
func (c *Chain) Authorize(ctx context.Context, call *Call) *Decision {
	start := time.Now()
	d := c.decide(ctx, call)
	d.Started = start
	d.Latency = time.Since(start)
	if d.Step == StepAuth && (call.Caller == nil || call.Caller.AuthMethod == "" || call.Caller.EntityID == "") {
		// The caller is unknown: there is no entity to put on a row. A
		// known caller refused at step 1 (a revoked credential) is audited.
		return d
	}
	c.lastEval.Store(int64(d.Latency))
	if c.Audit == nil {
		return d
	}
	id, err := c.Audit.Record(c.record(call, d))
	if err != nil {
		c.logger().Error("audit log write failed; refusing the call", "tool", clip(call.ToolName), "entity", call.Caller.EntityID, "err", err)
		return auditFailure(d)
	}
	d.AuditID = id
	return d
}

// LastEval is how long the most recent decision (steps 2-5, without the
// audit record) took; /health reports it as last_policy_eval_ms.
func (c *Chain) LastEval() time.Duration { return time.Duration(c.lastEval.Load()) }

// Finish records an allowed call's outcome on its audit row without waiting
// (the last step of Run).
func (c *Chain) Finish(call *Call, d *Decision, o Outcome) {
	if c.Audit == nil || d == nil || d.AuditID == 0 {
		return
	}
	c.Audit.RecordOutcome(d.AuditID, o)
}

func (c *Chain) decide(ctx context.Context, call *Call) *Decision {
	// Step 1: the transport authenticated the caller (or did not), and a
	// per-client credential it presented is still valid.
	if call.Caller == nil || call.Caller.AuthMethod == "" || call.Caller.EntityID == "" {
		return deny(CodeUnauthorized, StepAuth, "not_authenticated", nil)
	}
	if d := c.credential(call.Caller); d != nil {
		return d
	}
	// Step 2: trust registry.
	entry, d := c.trust(call.Caller.EntityID)
	if d != nil {
		return d
	}
	claimed, d := c.claimed(call.Caller)
	if d != nil {
		return d
	}
	lvl := entry.Level
	if claimed != nil {
		lvl = min(lvl, claimed.Level)
	}
	level := func(d *Decision) *Decision { d.TrustLevel = lvl; return d }
	if call.Invalid != nil {
		return level(&Decision{Step: StepParams, Reason: "invalid_params", Err: call.Invalid})
	}
	// The name must match a tool before policy can be asked about it.
	if call.Entry.Tool == nil {
		d := deny(jsonrpc.CodeInvalidParams, StepLookup, "unknown_tool", nil)
		d.Err.Message = "unknown tool: " + clip(call.ToolName)
		d.Err.Data = nil
		return level(d)
	}
	spec := call.Entry.Tool.Spec()
	// Step 3: policy, under the credential's row and, when the client
	// claimed another kind, under that kind's row too.
	allow, reason := Policy(c.options(), entry, spec)
	if !allow {
		return level(policyDenial(call.Caller.EntityID, entry, spec, reason))
	}
	if claimed != nil {
		if ok, why := Policy(c.options(), *claimed, spec); !ok {
			return level(deny(CodePolicyDenied, StepPolicy, why+ReasonClaimSuffix, nil))
		}
	}
	// Step 4: supply chain.
	if d := c.supply(call.Entry); d != nil {
		return level(d)
	}
	// Step 5: sandbox guard.
	if d := c.sandbox(ctx, spec, call.Args); d != nil {
		return level(d)
	}
	return &Decision{Step: StepHandler, Reason: reason, TrustLevel: lvl}
}

// ReasonClaimSuffix marks a policy reason that came from the trust row of
// the kind the client claimed to be, not of its credential.
const ReasonClaimSuffix = "_for_claimed_kind"

// credential is the second half of step 1: a caller that presented a
// per-client credential is refused once it is revoked.
func (c *Chain) credential(caller *Caller) *Decision {
	if caller.CredentialID == "" {
		return nil
	}
	if c.Credentials == nil {
		return deny(CodeUnauthorized, StepAuth, "credential_unverifiable", nil)
	}
	ok, err := c.Credentials.CredentialActive(caller.CredentialID)
	if err != nil {
		c.logger().Error("credential lookup failed; refusing the call", "credential", caller.CredentialID, "err", err)
		return deny(CodeUnauthorized, StepAuth, "credential_unverifiable", nil)
	}
	if !ok {
		d := deny(CodeUnauthorized, StepAuth, "credential_revoked", map[string]any{
			"credential": caller.CredentialID,
			"hint":       "the credential was revoked; issue a new one with clawd token issue --client " + caller.Kind,
		})
		d.TrustLevel = NoTrustLevel
		return d
	}
	return nil
}

// claimed is the trust row of the kind the client claimed to be, when that
// differs from its credential's kind; nil when it claimed none. It can only
// take permissions away: every decision must pass both rows. A claimed
// kind without a row may call nothing, as that kind itself may not (the
// user who removed cc:* shut Claude Code out, on every transport), and a
// row that cannot be read refuses the call: neither falls back to the
// credential's row alone.
func (c *Chain) claimed(caller *Caller) (*TrustEntry, *Decision) {
	if caller.ClaimKind == "" {
		return nil, nil
	}
	entity := caller.ClaimKind + ":" + caller.Subject
	e, d := c.trust(entity)
	if d != nil && d.Reason == "no_trust_registry_row" {
		d = deny(CodeUnknownEntity, StepTrust, ReasonClaimNoRow, map[string]any{
			"entity": entity, "claim": caller.Claim,
			"hint": "clawd trust set " + entity + " LEVEL",
		})
		d.TrustLevel = NoTrustLevel
	}
	if d != nil {
		return nil, d
	}
	return &e, nil
}

// ReasonClaimNoRow: the client said it is a kind (clientInfo.name) whose
// trust registry row does not exist.
const ReasonClaimNoRow = "no_trust_registry_row_for_claimed_kind"

// trust is step 2: the entity's registry row (exact, else "kind:*").
func (c *Chain) trust(entity string) (TrustEntry, *Decision) {
	entry, ok, err := c.Trust.Lookup(entity)
	if err != nil {
		c.logger().Error("trust registry lookup failed; refusing the call", "entity", entity, "err", err)
		d := &Decision{Step: StepTrust, Reason: "trust_registry_unavailable", TrustLevel: NoTrustLevel,
			Err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: "internal error: the trust registry could not be read, so the call was refused; see clawd's log",
				Data:    map[string]any{"reason": "trust_registry_unavailable"}}}
		return TrustEntry{}, d
	}
	if !ok {
		d := deny(CodeUnknownEntity, StepTrust, "no_trust_registry_row", map[string]any{
			"entity": entity,
			"hint":   "clawd trust set " + entity + " LEVEL",
		})
		d.TrustLevel = NoTrustLevel
		return TrustEntry{}, d
	}
	return entry, nil
}

// sandbox is step 5: every path argument must resolve inside the workspace
// and, for the tools that read or write it, not reach clawd's own state.
// It only makes the error precise and the Deny durable before anything
// runs; the handler's os.Root and its identity check are the barrier.
func (c *Chain) sandbox(ctx context.Context, spec *tools.Spec, args jsontext.Value) *Decision {
	for _, name := range spec.PathArgs {
		p, ok := stringArg(args, name)
		if !ok {
			continue
		}
		if _, err := c.WS.Check(ctx, p); err != nil {
			if v, ok := err.(*sandbox.Violation); ok {
				return deny(CodeSandboxViolation, StepSandbox, v.Reason, map[string]any{"path": v.Path})
			}
			// Not a violation (e.g. a NUL byte): the handler reports it.
			continue
		}
		// clawd's own state inside the workspace (docs/tools.md).
		if v, ok := c.WS.CheckState(ctx, p, spec.StateAccess).(*sandbox.Violation); ok {
			return deny(CodeSandboxViolation, StepSandbox, v.Reason, map[string]any{"path": v.Path})
		}
	}
	return nil
}

// Visible reports whether the caller may call the tool: tools/list shows
// only those. It runs steps 2-4 (not the per-call sandbox step).
func (c *Chain) Visible(caller *Caller, e tools.Entry) bool {
	return len(c.VisibleOf(caller, []tools.Entry{e})) == 1
}

// VisibleOf returns the entries of all the caller may call, in order: what
// Visible says of each, with the caller's trust rows read once and each
// provider's origin checked once for the whole list (a list of 30 servers'
// tools stats 30 executables, not 500). The per-tool steps (config
// switches, policy, definition approval) still run per tool.
func (c *Chain) VisibleOf(caller *Caller, all []tools.Entry) []tools.Entry {
	v, ok := c.viewer(caller)
	if !ok {
		return nil
	}
	out := all[:0:0]
	for _, e := range all {
		if v.visible(e) {
			out = append(out, e)
		}
	}
	return out
}

// viewer is what Visible knows of a caller before it looks at a tool.
type viewer struct {
	c       *Chain
	opts    Options
	entry   TrustEntry
	claimed *TrustEntry
	// origins remembers each provider's origin check for one list.
	origins map[tools.Provider]bool
}

// viewer resolves the caller's credential and trust rows (steps 1-2), or
// says it may see nothing.
func (c *Chain) viewer(caller *Caller) (viewer, bool) {
	if caller == nil || caller.AuthMethod == "" || caller.EntityID == "" {
		return viewer{}, false
	}
	if c.credential(caller) != nil {
		return viewer{}, false
	}
	entry, ok, err := c.Trust.Lookup(caller.EntityID)
	if err != nil || !ok {
		return viewer{}, false
	}
	claimed, d := c.claimed(caller)
	if d != nil {
		return viewer{}, false
	}
	return viewer{c: c, opts: c.options(), entry: entry, claimed: claimed, origins: map[tools.Provider]bool{}}, true
}

// visible runs steps 3-4 for one tool: policy (which also refuses a tool
// switched off in config, also under the claimed kind's row) and the
// supply-chain step.
func (v *viewer) visible(e tools.Entry) bool {
	if e.Tool == nil {
		return false
	}
	spec := e.Tool.Spec()
	if allow, _ := Policy(v.opts, v.entry, spec); !allow {
		return false
	}
	if v.claimed != nil {
		if allow, _ := Policy(v.opts, *v.claimed, spec); !allow {
			return false
		}
	}
	// Policy refused a tool switched off in config; what is left is the
	// supply-chain step, with the provider's part checked once per list.
	if definition(e) != nil {
		return false
	}
	ok, seen := v.origins[e.Provider]
	if !seen {
		ok = v.c.supplyOrigin(e) == nil
		v.origins[e.Provider] = ok
	}
	return ok
}

func (c *Chain) options() Options {
	if c.Options == nil {
		return Options{}
	}
	return c.Options()
}

func (c *Chain) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// record is the audit row of a decision.
func (c *Chain) record(call *Call, d *Decision) *AuditRecord {
	r := &AuditRecord{
		Time:       d.Started,
		EntityID:   call.Caller.EntityID,
		ToolID:     clip(call.ToolName),
		TrustLevel: d.TrustLevel,
		Result:     ResultAllow,
		Reason:     d.Reason,
		Step:       d.Step,
		Transport:  call.Caller.Transport,
		RequestID:  clip(call.RequestID),
		Latency:    d.Latency,

		ClientClaim:  call.Caller.Claim,
		CredentialID: call.Caller.CredentialID,
		ArgsSHA256:   ArgsDigest(call.Args),
		ArgsSummary:  argsSummary(call.Args, c.secrets()),
	}
	if !d.Allowed() {
		r.Result = ResultDeny
	} else {
		r.AwaitsOutcome = true // Run calls Finish once the handler ends
	}
	// An upstream tool's row names its server: one field compare for
	// built-in tools, which stay NULL.
	if call.Entry.Provider != nil && call.Entry.Tool != nil && call.Entry.Tool.Spec().Permission == tools.PermUpstream {
		r.Server = call.Entry.Provider.ID()
	}
	return r
}

// secrets is what Secrets returns, nil without it.
func (c *Chain) secrets() []string {
	if c.Secrets == nil {
		return nil
	}
	return c.Secrets()
}

// auditFailure refuses a call whose decision could not be put on record.
func auditFailure(d *Decision) *Decision {
	return &Decision{
		Step: d.Step, Reason: "audit_unavailable", TrustLevel: d.TrustLevel, Started: d.Started, Latency: d.Latency,
		Err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "internal error: the audit log could not be written, so the call was refused; see clawd's log, and run `clawd doctor`",
			Data:    map[string]any{"reason": "audit_unavailable"}},
	}
}

// maxAuditText caps caller-chosen text (tool name, request id) stored in the
// audit log, so a hostile client cannot bloat it with megabyte names.
const maxAuditText = 256

func clip(s string) string {
	if len(s) <= maxAuditText {
		return s
	}
	// Cut on a rune boundary.
	i := maxAuditText
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "..."
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

// MemoryTrust is an in-memory TrustStore for tests of the steps alone; the
// daemon uses the SQLite registry (internal/store).
type MemoryTrust struct {
	mu   sync.RWMutex
	rows map[string]TrustEntry
}

// DefaultTrustRows are the rows seeded on first start (docs/authorization.md).
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
	return LookupIn(m.rows, entity)
}

// LookupIn is the registry's matching rule over a map of rows: the exact
// entity wins, else its "kind:*" row.
func LookupIn(rows map[string]TrustEntry, entity string) (TrustEntry, bool, error) {
	if r, ok := rows[entity]; ok {
		return r, true, nil
	}
	if i := strings.IndexByte(entity, ':'); i > 0 {
		if r, ok := rows[entity[:i]+":*"]; ok {
			return r, true, nil
		}
	}
	return TrustEntry{}, false, nil
}
