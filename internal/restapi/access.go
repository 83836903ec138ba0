package restapi

// Who may use the API, and the audit rows of what they did.
//
// The rule (docs/upstreams.md, "Who may call it"): only the workspace
// token over HTTP, or a unix-socket peer of the user's uid that presented
// no credential (the kernel vouches for it as the token does), never a
// per-client credential; and the caller's entity must have a
// trust level of at least 1 to read and 2 to change anything, test or
// refresh. Why: adding or editing a stdio server chooses a command clawd
// runs, and an HTTP server's headers may name ${VAR}s of clawd's
// environment that clawd then sends to the URL; either is as strong as
// running a command. Per-client credentials are issued to give a client
// less than the user (and a paired phone will hold its own), so none of
// them reaches this API, whatever its kind. The workspace token is a 0600
// file of the user's, whose holder could run `clawd mcp add` as well; the
// level check lets a user who lowered that entity to read-only keep it so
// here too.

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/secrets"
)

type access int

const (
	accessRead   access = iota // list, get, logs: level 1
	accessChange               // create, update, delete, toggle, test, refresh: level 2
)

// authorize returns the caller's trust level or the refusal.
func (a *API) authorize(c Caller, need access) (int, error) {
	if c.CredentialID != "" {
		return chain.NoTrustLevel, fail(http.StatusForbidden, "credential_not_allowed",
			"forbidden: the REST API takes only the workspace token (clawd token show), not a per-client credential (%s, kind %s): those are for MCP clients and get no say over which servers clawd runs",
			c.CredentialID, c.Kind)
	}
	e, ok, err := a.DB.Lookup(c.Entity)
	if err != nil {
		return chain.NoTrustLevel, fmt.Errorf("reading the trust registry: %w", err)
	}
	want := 1
	what := "read the server list"
	if need == accessChange {
		want, what = 2, "change, test or refresh servers (they start processes and connect)"
	}
	if !ok {
		return chain.NoTrustLevel, fail(http.StatusForbidden, "unknown_entity",
			"forbidden: %s has no trust registry row; to %s it needs level %d: clawd trust set %s %d", c.Entity, what, want, c.Entity, want)
	}
	if e.Level < want {
		return e.Level, fail(http.StatusForbidden, "trust_level_too_low",
			"forbidden: to %s %s needs trust level %d, it has %d (row %s); raise it with clawd trust set %s %d", what, c.Entity, want, e.Level, e.Entity, e.Entity, want)
	}
	if c.Claimed != "" && c.Claimed != c.Entity {
		ce, ok, err := a.DB.Lookup(c.Claimed)
		if err != nil {
			return chain.NoTrustLevel, fmt.Errorf("reading the trust registry: %w", err)
		}
		if !ok {
			// The claimed kind may do nothing; the claim does not fall
			// back to what the credential alone gives.
			return chain.NoTrustLevel, fail(http.StatusForbidden, "unknown_entity",
				"forbidden: the client says it is %s, which has no trust registry row (a claim can only lower what a credential gives); to %s it needs level %d: clawd trust set %s %d",
				c.Claimed, what, want, c.Claimed, want)
		}
		if ce.Level < want {
			return ce.Level, fail(http.StatusForbidden, "trust_level_too_low",
				"forbidden: the client says it is %s, whose row %s has trust level %d; to %s it needs %d (a claim can only lower what a credential gives)",
				c.Claimed, ce.Entity, ce.Level, what, want)
		}
	}
	return e.Level, nil
}

// audit records one event about a server (Step "upstream", Transport
// "rest"): reason is "<event>: <detail>". It is for what is not a change
// of the table (a refusal, a test, a refresh): a failure to record is
// logged. Changes are recorded by change, which fails closed.
func (a *API) audit(rq *request, server, result, reason string) {
	if a.Audit == nil {
		return
	}
	rec := a.record(rq, server, result, reason)
	if _, err := a.Audit.Record(rec); err != nil {
		a.logger().Error("rest api: writing the audit row failed", "server", server, "reason", rec.Reason, "err", err)
	}
}

func (a *API) record(rq *request, server, result, reason string) *chain.AuditRecord {
	by := store.ChangeActor{Entity: rq.caller.Entity, TrustLevel: rq.level, Transport: "rest",
		RequestID: rq.r.Method + " " + clip(rq.r.URL.Path, 200), CredentialID: rq.caller.CredentialID}
	return store.ChangeRecord(by, time.Now(), "mcp:"+server, result, clip(secrets.MaskText(reason), 500))
}

// change returns what puts a change of the table on record, fail closed,
// as a tool call's decision is: confirm runs inside the change's
// transaction (store.Confirm) and writes its Allow row, naming the server
// and what changed (describe), durably before the change commits; when
// the row cannot be written the change is rolled back and answered 503.
// done records the outcome on that row: ok, or error when the commit
// failed after all. With no audit log (a.Audit nil) nothing is recorded.
func (a *API) change(rq *request, describe func(before, after store.MCPServer) (server, reason string)) (confirm store.Confirm, done func(error)) {
	if a.Audit == nil {
		return nil, func(error) {}
	}
	row := store.NewChangeRow(a.Audit, func(err error) string { return clip(secrets.MaskText(err.Error()), 200) })
	confirm = func(before, after store.MCPServer) error {
		server, reason := describe(before, after)
		rec := a.record(rq, server, chain.ResultAllow, reason)
		if err := row.Write(rec); err != nil {
			a.logger().Error("rest api: a change was refused: its audit row could not be written", "server", server, "reason", rec.Reason, "err", err)
			return fail(http.StatusServiceUnavailable, "audit_failed",
				"the change was not made: its audit row could not be written (%s); clawd makes no configuration change it cannot record. Check the disk and clawd's log, then retry",
				clip(secrets.MaskText(err.Error()), 300))
		}
		return nil
	}
	return confirm, row.Done
}

// auditRefusal records a request refused for its caller's rights (a read
// or a change): which server it was about (the collection when none) and
// why.
func (a *API) auditRefusal(ctx context.Context, rq *request, err error) {
	server := "*"
	if rq.id != 0 {
		if s, e := a.DB.MCPServer(ctx, rq.id); e == nil {
			server = s.Name
		}
	}
	a.audit(rq, server, chain.ResultDeny, "refuse: "+rq.r.Method+" "+rq.r.URL.Path+": "+err.Error())
}
