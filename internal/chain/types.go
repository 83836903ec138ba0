// Package chain is the one place that decides who may call which tool.
//
// Every tools/call passes five steps in this order (docs/authorization.md):
// auth -> trust registry -> policy -> supply chain -> sandbox guard, then the
// handler. A failing step short-circuits with its JSON-RPC error
// (docs/authorization.md lists the codes) and the handler never runs.
package chain

import (
	"context"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/support/netguard"
	"github.com/clawde/clawd/internal/tools"
)

// The spec's chain error codes; each message starts with the code's name
// (see messageFor) followed by the reason.
const (
	CodeUnauthorized      = -32001
	CodeUnknownEntity     = -32002
	CodePolicyDenied      = -32003
	CodeSupplyChainDenied = -32004
	CodeSandboxViolation  = -32005
)

// Step names, as recorded in the audit log's step column.
const (
	StepAuth    = "auth"
	StepTrust   = "trust"
	StepPolicy  = "policy"
	StepSupply  = "supply_chain"
	StepLookup  = "lookup" // the tool name matched no tool
	StepParams  = "params" // the call was malformed (Call.Invalid)
	StepSandbox = "sandbox"
	StepHandler = "handler" // a decision that passed every step
)

// Caller is who is calling, as established by the transport (step 1) and
// the MCP initialize handshake. Its entity kind comes from the credential the
// transport checked, never from what the client says about itself
// (docs/security.md): a client's own name is kept as Claim and may only lower
// its trust.
type Caller struct {
	// Transport is "stdio", "unix" or "http".
	Transport string
	// AuthMethod says how step 1 was passed: "spawn" (stdio: the host
	// started this process), "peercred" (unix socket, same UID), "bearer"
	// (workspace token), "credential" (a per-client credential from
	// `clawd token issue`), "device_key" (paired device). Empty means the
	// caller is not authenticated and every call is refused with -32001.
	AuthMethod string
	// Kind is the entity kind the credential maps to: stdio's --client, the
	// configured kind of the workspace token and of socket peers, a
	// per-client credential's kind, "device" for a paired device. A caller
	// without a kind gets no entity and is refused with -32001.
	Kind string
	// CredentialID names the per-client credential the caller presented
	// ("" for the workspace token, peer credentials and stdio). The chain
	// checks on every call that it is still valid, so a revoked credential
	// is refused at once, also on a connection opened before.
	CredentialID string
	// Subject is the part after the colon of the entity id: the workspace id,
	// or the device id for a paired device.
	Subject string
	// EntityID is "<kind>:<subject>", set by Resolve at initialize.
	EntityID string
	// Claim is clientInfo.name as the client sent it (clipped), recorded in
	// the audit log as the client's own word.
	Claim string
	// ClaimKind is the entity kind Claim names ("claude-code" -> cc,
	// "opencode" -> oc) when it differs from Kind, else "". The chain applies
	// that kind's trust row too, so a claim can lower trust, never raise it.
	ClaimKind string
}

// Resolve sets EntityID from the credential's kind and records the client's
// claim (its clientInfo.name). A caller without a kind keeps an empty
// EntityID, which the chain refuses as unauthenticated.
func (c *Caller) Resolve(clientName string) {
	c.Claim = clip(clientName)
	c.ClaimKind = ""
	if c.Kind == "" {
		c.EntityID = ""
		return
	}
	c.EntityID = c.Kind + ":" + c.Subject
	if k := ClaimedKind(clientName); k != "" && k != c.Kind {
		c.ClaimKind = k
	}
}

// ClaimedKind maps an MCP clientInfo.name to the entity kind it claims, or
// "" for a name that claims none. The claim is never trusted to raise a
// level: see Caller.ClaimKind.
func ClaimedKind(name string) string {
	switch name {
	case "claude-code":
		return "cc"
	case "opencode":
		return "oc"
	}
	return ""
}

// Call is one tools/call as the chain sees it.
type Call struct {
	Caller *Caller
	// Entry is the tool the name resolved to; Entry.Tool is nil for an
	// unknown name, which the chain refuses with -32602 (and audits).
	Entry     tools.Entry
	ToolName  string
	Args      jsontext.Value
	RequestID string // the JSON-RPC id's text, for the audit log
	// Invalid, when set, is the protocol's refusal of a malformed call (no
	// name, arguments that are not an object): the chain answers it with
	// this error once the caller is known, and audits it as a Deny at
	// step params, so a malformed call is on record like any other.
	Invalid *jsonrpc.Error
}

// Decision is the chain's verdict on a Call. Err is nil when allowed.
type Decision struct {
	Err    *jsonrpc.Error
	Step   string // the step that decided (StepHandler when allowed)
	Reason string
	// TrustLevel is the caller's level, NoTrustLevel when no registry row
	// was found (or the lookup was not reached).
	TrustLevel int
	// AuditID is what AuditLog.Record returned for this decision's row
	// (the store's is a journal sequence, not the row id), for
	// RecordOutcome; 0 if none was written.
	AuditID int64
	Started time.Time
	// Latency is how long steps 2-5 took to decide, without the audit
	// record (the audit row's latency_ms / latency_us).
	Latency time.Duration
}

// NoTrustLevel marks a decision taken without a trust registry row; the
// audit row stores NULL.
const NoTrustLevel = -1

// Allowed reports whether the call may run.
func (d *Decision) Allowed() bool { return d.Err == nil }

// Outcome results (Outcome.Result).
const (
	OutcomeOK               = "ok"
	OutcomeToolError        = "tool_error"
	OutcomeCancelled        = "cancelled"
	OutcomeSandboxViolation = "sandbox_violation"
	OutcomeError            = "error"
	// OutcomeTimeout: the tool ran out of time and answered so (a bash
	// command killed at its timeout_ms).
	OutcomeTimeout = "timeout"
)

// Outcome is how an allowed call ended, recorded on its audit row.
type Outcome struct {
	// Result is "ok", "timeout", "tool_error", "cancelled", "sandbox_violation" or "error".
	// A sandbox_violation (os.Root refused a path while the handler ran)
	// turns the row's result into Deny with step "sandbox".
	Result string
	// Detail is a short reason for a failed outcome (never tool output).
	Detail   string
	Duration time.Duration
}

// Authorizer is what the MCP session needs from the chain: the protocol
// decodes a tools/call, hands it to Run and encodes the Answer; deciding,
// running the tool, labelling and auditing how it ended are the chain's.
// *Chain is the implementation; others should run allowed calls through
// Execute so they answer and audit the same way.
type Authorizer interface {
	// Run authorizes the call and, if allowed, runs it through next and
	// records its outcome. A denial's audit row is durable before Run
	// returns, an allowed call's before next.Call starts.
	Run(ctx context.Context, c *Call, next Next) Answer
	// VisibleOf returns the entries tools/list should show the caller, in
	// order: only tools its policy allows, none disabled in config, none
	// the supply-chain step refuses.
	VisibleOf(caller *Caller, all []tools.Entry) []tools.Entry
}

// deny builds a denial decision with the step's code (docs/authorization.md). The message is the
// code's name, a colon and the reason as a sentence naming what was refused
// and how to change it (clients show only the message, and an agent needs
// the reason to correct itself); data keeps the machine-readable reason.
func deny(code int, step, reason string, data map[string]any) *Decision {
	return denyWith(code, step, reason, describe(code, reason, data), data)
}

// denyWith is deny with the sentence given.
func denyWith(code int, step, reason, sentence string, data map[string]any) *Decision {
	msg := messageFor(code)
	if sentence != "" {
		msg += ": " + sentence
	}
	e := &jsonrpc.Error{Code: code, Message: msg}
	if data == nil {
		data = map[string]any{}
	}
	if _, ok := data["reason"]; !ok && reason != "" {
		data["reason"] = reason
	}
	e.Data = data
	return &Decision{Err: e, Step: step, Reason: reason}
}

// messageFor is the code's name, which every message starts with.
func messageFor(code int) string {
	switch code {
	case CodeUnauthorized:
		return "unauthorized"
	case CodeUnknownEntity:
		return "unknown_entity"
	case CodePolicyDenied:
		return "policy_denied"
	case CodeSupplyChainDenied:
		return "supply_chain_denied"
	case CodeSandboxViolation:
		return "sandbox_violation"
	}
	return "denied"
}

// describe turns a step's reason and data into the sentence of the message.
// Policy refusals build theirs in policy.go, where the levels are known.
func describe(code int, reason string, data map[string]any) string {
	str := func(k string) string { s, _ := data[k].(string); return s }
	switch code {
	case CodeUnauthorized:
		switch reason {
		case "credential_revoked":
			return "the per-client credential " + str("credential") + " this connection presented was revoked; " + str("hint")
		case "credential_unverifiable":
			return "the per-client credential this connection presented could not be checked, so the call was refused; see clawd's log"
		}
		return "the connection did not authenticate, so no tool may run; connect over stdio, over the unix " +
			"socket as the same user, or over HTTP with the workspace's bearer token (clawd token show)"
	case CodeUnknownEntity:
		if reason == ReasonClaimNoRow {
			return "the client says it is " + strconv.Quote(str("claim")) + ", so it is held to the rules of " + str("entity") +
				" too, which has no trust registry row: it may call no tool (a client's claim can only lower its trust); add one with `" +
				str("hint") + "`"
		}
		return str("entity") + " has no trust registry row, so it may call no tool; add one with `" + str("hint") +
			"` (level 1 reads, 2 also writes and executes, 3 also calls upstream tools)"
	case CodeSandboxViolation:
		return sandboxSentence(str("path"), reason)
	case CodeSupplyChainDenied:
		switch reason {
		case "no_provider":
			return "the tool has no provider, so its origin cannot be checked"
		case "no_binary_path":
			return "upstream server " + str("server") + " is a local executable but names no path, so its binary cannot be checked"
		case "origin_not_allowlisted":
			return "upstream server " + str("server") + " is remote and its origin " + str("origin") +
				" is not on the egress allowlist, so its tools are refused; " + str("hint")
		case "remote_origin_invalid":
			return "upstream server " + str("server") + " has a URL clawd will not connect to (" + str("error") +
				"), so its tools are refused; remove it (clawd mcp rm " + str("server") + ") and add it again with a valid URL"
		case "unknown_origin":
			return "upstream server " + str("server") + " does not say where its tools run (origin " + str("origin") +
				"), so they are refused"
		case "binary_unreadable":
			return "the binary of upstream server " + str("server") + " (" + str("path") +
				") cannot be read to check its SHA-256; see clawd's log"
		case "definition_changed":
			return "the definition of " + str("tool") + " (upstream server " + str("server") +
				") changed since you approved it, so it is withheld until you approve the new one; " + str("hint")
		case "definition_unapproved":
			return "the definition of " + str("tool") + " (upstream server " + str("server") +
				") has not been approved, so it is withheld; " + str("hint")
		case "binary_not_allowlisted":
			return "the binary of upstream server " + str("server") + " (" + str("path") + ", sha256 " + str("sha256") +
				") is not on the allowlist; " + str("hint")
		case "script_unreadable":
			return "the script upstream server " + str("server") + " runs (" + str("path") +
				") cannot be read to check its SHA-256; see clawd's log"
		case "script_not_allowlisted":
			return "the script upstream server " + str("server") + " runs (" + str("path") + ", sha256 " +
				str("script_sha256") + ") is not the one approved; " + str("hint")
		}
	}
	return reason
}

// sandboxSentence says which path argument left the workspace and why. The
// path is the caller's text, quoted and clipped.
func sandboxSentence(path, reason string) string {
	return strconv.Quote(clip(path)) + ": " + reason + "; only paths inside the workspace can be used"
}

// SandboxError is the -32005 error for a violation found outside the chain's
// sandbox step (by os.Root while the handler ran, e.g. a swapped symlink).
func SandboxError(path, reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeSandboxViolation, Message: "sandbox_violation: " + sandboxSentence(path, reason),
		Data: map[string]any{"path": path, "reason": reason}}
}

// Audit results (the audit row's result column, spelled as docs/authorization.md
// and `clawd audit --result` show them).
const (
	ResultAllow = "Allow"
	ResultDeny  = "Deny"
)

// AuditRecord is one decision as the audit log stores it.
type AuditRecord struct {
	Time       time.Time // when the chain started deciding
	EntityID   string
	ToolID     string // the requested tool name (also when unknown)
	TrustLevel int    // NoTrustLevel -> NULL
	Result     string // ResultAllow or ResultDeny
	Reason     string
	Step       string
	Transport  string
	RequestID  string // the JSON-RPC id's text
	Latency    time.Duration
	// ClientClaim is the caller's clientInfo.name, as it said it.
	ClientClaim string
	// CredentialID is the per-client credential presented, "" if none.
	CredentialID string
	// ArgsSHA256 and ArgsSummary identify the arguments without storing
	// them (ArgsDigest, ArgsSummary).
	ArgsSHA256  string
	ArgsSummary string
	// Server is the upstream MCP server a proxied call went to (its
	// configured name), "" for built-in tools and unknown names. The
	// exposed tool name alone cannot say: it may be hash-shortened.
	Server string
	// AwaitsOutcome says RecordOutcome will follow for this row (an
	// allowed call whose handler runs), so the log keeps what it needs to
	// find the row until then, and nothing for the rows that get none.
	AwaitsOutcome bool
}

// AuditLog stores decisions durably.
type AuditLog interface {
	// Record stores r durably and returns, once it is, an id that
	// RecordOutcome takes (the store's is a journal sequence, not the row
	// id). An error means the row is not on record; the chain then
	// refuses the call (fail closed).
	Record(r *AuditRecord) (id int64, err error)
	// RecordOutcome records how an allowed call ended on its row. It does
	// not wait: the outcome may be lost in a crash, the decision may not.
	RecordOutcome(id int64, o Outcome)
}

// Egress is the egress allowlist (cd_egress_allowlist): the origins remote
// upstream servers may be reached at.
type Egress interface {
	// EgressAllowed reports whether o is allowlisted.
	EgressAllowed(o netguard.Origin) (bool, error)
}

// Allowlist is the supply-chain allowlist (cd_mcp_server_allowlist).
type Allowlist interface {
	// ServerAllowed reports whether the provider id may run a binary with
	// this SHA-256 (lowercase hex).
	ServerAllowed(server, sha256 string) (bool, error)
}

// ScriptAllowlist is what an Allowlist also implements when it can vouch
// for the script an interpreter runs (tools.Origin.Script). A provider
// with a script is refused when the chain's Allowlist does not implement
// it.
type ScriptAllowlist interface {
	// ScriptAllowed reports whether the provider id may run a script with
	// this SHA-256 (lowercase hex).
	ScriptAllowed(server, sha256 string) (bool, error)
}
