package tools

import "context"

// CallerAware is a tool that is told who calls it: an upstream tool whose
// server receives the caller's identity (docs/upstreams.md, "Identity
// forwarding"). The chain puts the caller's entity id in the call's context
// only for such tools, after it authorized the call, so built-in calls pay
// nothing for it.
type CallerAware interface {
	Tool
	// ForwardsCaller marks the tool; it does nothing.
	ForwardsCaller()
}

type callerKey struct{}

// WithCaller returns ctx carrying the authenticated caller's entity id
// ("kind:subject", from its credential, never from what the client said).
func WithCaller(ctx context.Context, entity string) context.Context {
	return context.WithValue(ctx, callerKey{}, entity)
}

// CallerEntity is the entity id WithCaller put in ctx, "" if none: a call
// that did not come through the chain has no caller, and a tool must then
// not make one up.
func CallerEntity(ctx context.Context) string {
	s, _ := ctx.Value(callerKey{}).(string)
	return s
}
