package upstream

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// ForwardsCaller makes every upstream tool tools.CallerAware: the chain
// tells it the authorized caller, which forward passes on when the server
// is set to receive it.
func (t *upTool) ForwardsCaller() {}

// identityConfig is the server's current forwarding setting. It is not part
// of the connection (ServerConfig.equal ignores it), so changing it takes
// effect on the next call without a reconnect.
func (s *server) identityConfig() identity.Config {
	if c := s.ident.Load(); c != nil {
		return *c
	}
	return s.cfg.Identity
}

func (s *server) setIdentity(c identity.Config) { s.ident.Store(&c) }

// forward rewrites one call for the server's identity setting: reserved
// arguments a model supplied are always removed, and with forwarding on
// clawd's value for the caller in ctx is added, plus the _meta entry. A
// refusal (signed mode without a usable key, or no caller) is audited as
// identity_refused and returned: nothing is sent.
func (s *server) forward(ctx context.Context, tool string, args jsontext.Value) (jsontext.Value, map[string]any, error) {
	cfg := s.identityConfig()
	fw := s.m.opts.Identity // never nil (withDefaults)
	entity := tools.CallerEntity(ctx)
	c, err := fw.Apply(cfg, s.cfg.Name, entity, args)
	if err == nil {
		return c.Args, c.Meta, nil
	}
	var r *identity.Refused
	if !errors.As(err, &r) {
		return nil, nil, &tools.ArgError{Msg: err.Error()}
	}
	s.m.opts.Logger.Warn("upstream call refused: the caller's identity cannot be forwarded", "server", s.cfg.Name, "tool", tool, "err", err)
	s.auditRefusal(entity, tool, err.Error())
	return nil, nil, err
}

// setIdentityMeta makes params._meta["clawd/identity"] clawd's value, or
// removes it when nothing is forwarded: a _meta filled from elsewhere (a
// client's, once one is passed on) can never carry its own.
func setIdentityMeta(params *mcp.CallToolParams, ident map[string]any) {
	if params.Meta != nil {
		delete(params.Meta, identity.MetaKey)
	}
	if ident == nil {
		return
	}
	if params.Meta == nil {
		params.Meta = mcp.Meta{}
	}
	params.Meta[identity.MetaKey] = ident
}

// auditRefusal writes the identity_refused row (docs/upstreams.md lists
// the upstream audit rows).
func (s *server) auditRefusal(entity, tool, detail string) {
	a := s.m.opts.Audit
	if a == nil {
		return
	}
	if entity == "" {
		entity = "clawd"
	}
	a(AuditEvent{Time: time.Now(), Entity: entity, Tool: "mcp:" + s.cfg.Name + "/" + tool,
		Reason: "identity_refused: " + secrets.MaskText(detail)})
}

// withoutToken removes tok, the signed token clawd sent with a call, from
// what the server answered: a server that echoes its arguments (a
// debugging tool, a validation error quoting its input) would otherwise
// hand the caller, and the model, a token it could present to the server's
// backend itself until it expires, past clawd's checks. The token is
// replaced wherever its exact text occurs in the result's content,
// structuredContent and _meta (an error's message has it replaced in
// callOnce).
func withoutToken(r *tools.CallResult, tok string) *tools.CallResult {
	if tok == "" {
		return r
	}
	t, m := []byte(tok), []byte(secrets.Masked)
	scrub := func(v jsontext.Value) (jsontext.Value, bool) {
		if !bytes.Contains(v, t) {
			return v, false
		}
		return bytes.ReplaceAll(v, t, m), true
	}
	c, c1 := scrub(r.Content)
	sc, c2 := scrub(r.StructuredContent)
	mt, c3 := scrub(r.Meta)
	if !c1 && !c2 && !c3 {
		return r
	}
	out := *r // what ParseCallResult checked stays known for the members left as they were
	out.Content, out.StructuredContent, out.Meta = c, sc, mt
	return &out
}
