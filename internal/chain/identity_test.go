package chain

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// memCreds is a CredentialStore of active ids.
type memCreds struct {
	active map[string]bool
	err    error
}

func (m *memCreds) CredentialActive(id string) (bool, error) { return m.active[id], m.err }

// TestClaimOnlyLowersTrust: a client's claimed name can take permissions
// away (the claimed kind's row must allow the call too) but never add any,
// including per-tool allows the credential's row lacks.
func TestClaimOnlyLowersTrust(t *testing.T) {
	rows := []TrustEntry{
		{Entity: "local:*", Level: 1},
		{Entity: "oc:*", Level: 2, Perms: map[string]string{"bash": "deny"}},
		{Entity: "cc:*", Level: 3, Perms: map[string]string{"odd_hint": "allow"}},
	}
	tests := []struct {
		kind, claim string
		tool        string
		allow       bool
		level       int
	}{
		{"local", "claude-code", "write_file", false, 1}, // cc would allow: no raise
		{"local", "claude-code", "odd_hint", false, 1},   // cc's explicit allow does not carry over
		{"local", "claude-code", "read_file", true, 1},
		{"cc", "", "bash", true, 3},
		{"cc", "opencode", "bash", false, 2},      // oc denies bash: lowered
		{"cc", "opencode", "write_file", true, 2}, // oc allows writes at 2
		{"cc", "opencode", "srv__fetch", false, 2},
		{"cc", "claude-code", "srv__fetch", true, 3}, // same kind: no second row
		{"oc", "claude-code", "bash", false, 2},      // oc's own deny stays
		{"cc", "some-other-host", "srv__fetch", true, 3},
		{"cc", "local", "srv__fetch", true, 3}, // "local" is not a name any kind claims
	}
	for _, tt := range tests {
		c, audit := newTestChain(t, Options{}, rows...)
		cl := &Caller{Transport: "unix", AuthMethod: "peercred", Kind: tt.kind, Subject: "ws"}
		cl.Resolve(tt.claim)
		d := c.Authorize(context.Background(), call(cl, tt.tool, `{}`))
		if d.Allowed() != tt.allow {
			t.Errorf("%s claiming %q calls %s: allowed=%v, want %v (%v)", tt.kind, tt.claim, tt.tool, d.Allowed(), tt.allow, d.Err)
		}
		if d.TrustLevel != tt.level {
			t.Errorf("%s claiming %q: level %d, want %d", tt.kind, tt.claim, d.TrustLevel, tt.level)
		}
		if vis := c.Visible(cl, call(cl, tt.tool, "").Entry); vis != tt.allow {
			t.Errorf("%s claiming %q: %s visible=%v, want %v", tt.kind, tt.claim, tt.tool, vis, tt.allow)
		}
		if len(audit.Rows()) != 1 || audit.Rows()[0].EntityID != tt.kind+":ws" || audit.Rows()[0].ClientClaim != tt.claim {
			t.Errorf("%s claiming %q: audit rows %+v, want one for %s:ws with the claim", tt.kind, tt.claim, audit.Rows(), tt.kind)
		}
	}
}

// TestCallerWithoutKindIsUnauthenticated: no credential, no entity.
func TestCallerWithoutKindIsUnauthenticated(t *testing.T) {
	c, audit := newTestChain(t, Options{}, DefaultTrustRows()...)
	cl := &Caller{Transport: "http", AuthMethod: "bearer", Subject: "ws"}
	cl.Resolve("claude-code")
	if d := c.Authorize(context.Background(), call(cl, "read_file", `{}`)); d.Err == nil || d.Err.Code != CodeUnauthorized {
		t.Fatalf("a caller without a kind: %+v", d)
	}
	if len(audit.Rows()) != 0 {
		t.Errorf("audit rows for an unknown caller: %+v", audit.Rows())
	}
}

// TestRevokedCredentialRefused: a credential checked on every call; a
// revoked or unverifiable one is refused at step 1 and audited.
func TestRevokedCredentialRefused(t *testing.T) {
	for _, tt := range []struct {
		name   string
		creds  CredentialStore
		reason string
	}{
		{"active", &memCreds{active: map[string]bool{"c1": true}}, ""},
		{"revoked", &memCreds{active: map[string]bool{}}, "credential_revoked"},
		{"store error", &memCreds{err: errors.New("disk gone")}, "credential_unverifiable"},
		{"no store", nil, "credential_unverifiable"},
	} {
		c, audit := newTestChain(t, Options{}, DefaultTrustRows()...)
		if tt.creds != nil {
			c.Credentials = tt.creds
		}
		cl := &Caller{Transport: "http", AuthMethod: "credential", Kind: "cc", CredentialID: "c1", Subject: "ws"}
		cl.Resolve("")
		d := c.Authorize(context.Background(), call(cl, "read_file", `{}`))
		if tt.reason == "" {
			if !d.Allowed() {
				t.Errorf("%s: refused: %v", tt.name, d.Err)
			}
			continue
		}
		if d.Allowed() || d.Err.Code != CodeUnauthorized || d.Reason != tt.reason {
			t.Errorf("%s: decision %+v, want -32001 %s", tt.name, d, tt.reason)
		}
		if len(audit.Rows()) != 1 || audit.Rows()[0].Step != StepAuth || audit.Rows()[0].CredentialID != "c1" {
			t.Errorf("%s: audit rows %+v, want one denial at step auth naming the credential", tt.name, audit.Rows())
		}
		if c.Visible(cl, call(cl, "read_file", "").Entry) {
			t.Errorf("%s: tools visible to a refused credential", tt.name)
		}
	}
}

// failingClaimTrust is a registry whose lookups of one entity fail.
type failingClaimTrust struct {
	*MemoryTrust
	bad string
}

func (f failingClaimTrust) Lookup(entity string) (TrustEntry, bool, error) {
	if entity == f.bad {
		return TrustEntry{}, false, errors.New("disk gone")
	}
	return f.MemoryTrust.Lookup(entity)
}

// TestClaimOfKindWithoutRowRefused: a client that says it is a kind the
// registry has no row for (the user removed cc:* to shut Claude Code out)
// may call nothing, as that kind may call nothing; and a claim whose row
// cannot be read does not fall back to the credential's row alone.
func TestClaimOfKindWithoutRowRefused(t *testing.T) {
	c, audit := newTestChain(t, Options{}, TrustEntry{Entity: "local:*", Level: 2})
	cl := &Caller{Transport: "unix", AuthMethod: "peercred", Kind: "local", Subject: "ws"}
	cl.Resolve("claude-code")
	d := c.Authorize(context.Background(), call(cl, "read_file", `{}`))
	if d.Allowed() || d.Err.Code != CodeUnknownEntity || d.Reason != ReasonClaimNoRow {
		t.Fatalf("local claiming claude-code without a cc row: %+v (%v), want -32002 %s", d, d.Err, ReasonClaimNoRow)
	}
	if !strings.Contains(d.Err.Message, "cc:ws") || !strings.Contains(d.Err.Message, "clawd trust set cc:ws") {
		t.Errorf("the refusal does not name the claimed entity and the fix: %s", d.Err.Message)
	}
	if rows := audit.Rows(); len(rows) != 1 || rows[0].Result != ResultDeny || rows[0].EntityID != "local:ws" {
		t.Errorf("audit rows %+v, want one Deny of local:ws", rows)
	}
	if c.Visible(cl, call(cl, "read_file", "").Entry) {
		t.Error("read_file is listed to a client whose claimed kind has no row")
	}
	// policy_stub_mode replaces only the policy step: the claim is still refused.
	c, _ = newTestChain(t, Options{PolicyStubMode: true}, TrustEntry{Entity: "local:*", Level: 2})
	if d := c.Authorize(context.Background(), call(cl, "read_file", `{}`)); d.Allowed() {
		t.Error("stub mode lets a claim without a row through")
	}

	c, _ = newTestChain(t, Options{}, DefaultTrustRows()...)
	c.Trust = failingClaimTrust{NewMemoryTrust(DefaultTrustRows()...), "cc:ws"}
	d = c.Authorize(context.Background(), call(cl, "read_file", `{}`))
	if d.Allowed() || d.Reason != "trust_registry_unavailable" {
		t.Errorf("a claim whose row cannot be read: %+v, want trust_registry_unavailable", d)
	}
	if c.Visible(cl, call(cl, "read_file", "").Entry) {
		t.Error("read_file is listed while the claimed kind's row cannot be read")
	}
}
