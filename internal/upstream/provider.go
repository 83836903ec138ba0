package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/tools"
)

// provider is one upstream server in the registry. It outlives a
// replacement of the server's configuration (the server behind it is
// swapped), so the registry keeps one entry per name.
type provider struct {
	name string

	mu   sync.RWMutex
	srv  *server
	list []tools.Tool // exposed tools, set by Manager.toolsChanged

	sig tools.ChangeSignal
}

func (p *provider) ID() string { return p.name }

// Origin is the resolved executable of a stdio server (its SHA-256 must be
// allowlisted for the chain to run its tools) or the URL of an http/sse one
// (its origin must be on the egress allowlist). It comes from
// clawd's configuration, never from the upstream.
func (p *provider) Origin() tools.Origin {
	return p.server().origin()
}

// Tools returns the cached list; it never calls the upstream.
func (p *provider) Tools() []tools.Tool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.list
}

// Start does nothing: Manager.Apply starts servers in the background, so
// that one slow upstream never delays the daemon's start.
func (p *provider) Start(context.Context) error { return nil }

// Stop ends the server (its session, and for stdio its process group).
func (p *provider) Stop(ctx context.Context) error { return p.server().shutdown(ctx) }

func (p *provider) Health() tools.ProviderHealth {
	st := p.server().status()
	var err error
	if st.LastError != "" {
		err = errors.New(st.LastError)
	}
	switch st.State {
	case StateConnected:
		return tools.ProviderHealth{Status: tools.StatusReady, LastError: err}
	case StateConnecting:
		return tools.ProviderHealth{Status: tools.StatusStarting, LastError: err}
	case StateStale:
		return tools.ProviderHealth{Status: tools.StatusDegraded, LastError: err}
	case StateDisabled:
		return tools.ProviderHealth{Status: tools.StatusStopped, LastError: err}
	}
	return tools.ProviderHealth{Status: tools.StatusFailed, LastError: err}
}

func (p *provider) OnChange(notify func()) (stop func()) { return p.sig.Subscribe(notify) }

func (p *provider) server() *server {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.srv
}

func (p *provider) setServer(s *server) {
	p.mu.Lock()
	p.srv = s
	p.mu.Unlock()
}

// setList replaces the exposed tools and signals a change if they differ.
func (p *provider) setList(list []tools.Tool) {
	p.mu.Lock()
	same := len(list) == len(p.list)
	for i := 0; same && i < len(list); i++ {
		a, b := list[i].(*upTool), p.list[i].(*upTool)
		same = a.original == b.original && a.spec.Name == b.spec.Name && a.spec.Description == b.spec.Description &&
			a.spec.Title == b.spec.Title && bytes.Equal(a.spec.InputSchema, b.spec.InputSchema) &&
			bytes.Equal(a.spec.OutputSchema, b.spec.OutputSchema) && a.approval == b.approval && a.sha256 == b.sha256
	}
	p.list = list
	p.mu.Unlock()
	if !same {
		p.sig.Notify()
	}
}

// upTool is one upstream tool under its exposed name. original is the
// upstream's name: the call is routed by this field, never by parsing the
// exposed name.
type upTool struct {
	p        *provider
	spec     tools.Spec
	original string
	// approval is the state of the definition this tool was built from
	// (sha256); only an approved one may run (DefinitionUnapproved).
	approval Approval
	sha256   string
}

func (t *upTool) Spec() *tools.Spec { return &t.spec }

func (t *upTool) Call(ctx context.Context, args jsontext.Value) (any, error) {
	if t.approval != ApprovalApproved {
		// The chain refuses these first; this holds for any other caller.
		return nil, tools.Errorf("the definition of %s is not approved; see clawd mcp diff %s, then clawd mcp approve %s %s",
			t.spec.Name, t.p.name, t.p.name, t.spec.Name)
	}
	res, err := t.p.server().call(ctx, t.original, t.sha256, args)
	if errors.Is(err, errDefinitionChanged) {
		// The server listed another definition (or was replaced) since
		// this tool was approved; toolsChanged is about to withhold it.
		return nil, tools.Errorf("the definition of %s changed since it was approved; see clawd mcp diff %s, then clawd mcp approve %s %s",
			t.spec.Name, t.p.name, t.p.name, t.spec.Name)
	}
	return res, err
}

// errDefinitionChanged: the server's list no longer has the definition the
// call was approved under; nothing was sent.
var errDefinitionChanged = errors.New("the tool's definition changed since it was approved")

// call forwards one tools/call. The result is the upstream's, raw
// (*tools.CallResult), capped at Options.MaxOutputBytes. A call bounded by
// the read timeout, or to a server that is not connected, or answered with
// a JSON-RPC error, becomes a tool error the model can read; the caller's
// cancellation is returned as ctx.Err() and reaches the upstream as
// notifications/cancelled. The arguments are first rewritten for the
// server's identity setting (forward); a refusal there sends nothing.
// def is the SHA-256 of the definition the call was approved under: while
// the server's list has another one for name, nothing is sent
// (errDefinitionChanged); "" checks nothing (tests calling unlisted tools).
// An HTTP server that forgot the session (404) is re-initialized once and
// the call retried once, if the new session lists the same definition.
func (s *server) call(ctx context.Context, name, def string, args jsontext.Value) (any, error) {
	args, meta, err := s.forward(ctx, name, args)
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		sess, swapped, why, listed := s.sessionFor(name, def)
		if !listed {
			// The server listed another definition (a reconnect, maybe the
			// one before a retry): the call's approval is not for it.
			return nil, errDefinitionChanged
		}
		if sess == nil {
			return nil, tools.Errorf("upstream server %s is not connected: %s", s.cfg.Name, why)
		}
		res, err := s.callOnce(ctx, sess, name, args, meta)
		if err == nil || !isSessionMissing(err) || ctx.Err() != nil {
			return res, err
		}
		if try > 0 {
			// The SDK's error names the session id; the model gets what
			// happened, as for every other upstream failure.
			return nil, tools.Errorf("upstream server %s forgot the session again (HTTP 404 on its session id) right after clawd connected anew; %s was tried twice",
				s.cfg.Name, displayName(name))
		}
		// The session is gone on the server: end ours, let the supervisor
		// reconnect, and retry once on the new session.
		sess.cs.Close()
		t := time.NewTimer(s.cfg.readTimeout())
		select {
		case <-swapped:
			// uninstall; wait for install
			s.mu.Lock()
			next := s.swapped
			s.mu.Unlock()
			if cur, _, _ := s.current(); cur == nil {
				select {
				case <-next:
				case <-t.C:
				case <-ctx.Done():
				}
			}
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

func (s *server) callOnce(ctx context.Context, sess *session, name string, args jsontext.Value, ident map[string]any) (any, error) {
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	shown := displayName(name) // the upstream's name, safe to show a model or a terminal
	rctx, cancel := context.WithTimeout(ctx, s.cfg.readTimeout())
	defer cancel()
	// The signed identity token, if one goes with the call: never the
	// client's to read, in a result (withoutToken), a progress report or an
	// error that quotes the arguments.
	secret, _ := ident["token"].(string)
	mask := func(text string) string {
		if secret != "" {
			text = strings.ReplaceAll(text, secret, secrets.Masked)
		}
		return clipText(s.mask(text))
	}
	var token string
	var route *progressRoute
	if tools.WantsProgress(ctx) {
		// A token of clawd's own, never the client's (progress.go).
		tok, rt, stop := sess.progress.open(ctx, secret)
		defer stop()
		token, route = tok, rt
	}
	var raw []byte
	var err error
	if sess.stdio != nil {
		raw, err = sess.stdio.callTool(rctx, name, args, ident, token, route)
	} else {
		raw, err = s.callSDK(rctx, sess, name, args, ident, token, route)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if rctx.Err() != nil {
		return nil, tools.Errorf("upstream server %s did not answer %s within %v (its read timeout)", s.cfg.Name, shown, s.cfg.readTimeout())
	}
	if err != nil {
		if isSessionMissing(err) {
			return nil, err
		}
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return nil, tools.Errorf("upstream server %s refused %s: %s (JSON-RPC error %d)", s.cfg.Name, shown, mask(we.Message), we.Code)
		}
		return nil, tools.Errorf("upstream server %s: %s: %s", s.cfg.Name, shown, mask(err.Error()))
	}
	r, perr := tools.ParseCallResult(raw)
	if perr != nil {
		return nil, tools.Errorf("upstream server %s returned a malformed result for %s: %s", s.cfg.Name, shown, mask(perr.Error()))
	}
	return capResult(withoutToken(r, secret), s.m.opts.MaxOutputBytes, maxOutputItems), nil
}

// callSDK runs tools/call through the go-sdk client (Streamable HTTP and
// legacy SSE servers) and returns the raw result: the one the HTTP client
// captured, or the SDK's decoded result encoded again when there is none
// (legacy SSE, or an answer over the capture limit).
func (s *server) callSDK(ctx context.Context, sess *session, name string, args jsontext.Value, ident map[string]any, token string, route *progressRoute) ([]byte, error) {
	cctx, sl := withCapture(ctx)
	params := &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)}
	if route != nil {
		params.SetProgressToken(token)
		cctx = withRoute(cctx, route)
	}
	setIdentityMeta(params, ident) // last: whatever else fills _meta cannot set clawd/identity
	res, err := sess.cs.CallTool(cctx, params)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if raw := sl.get(); raw != nil {
		return raw, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("cannot encode its result: %w", err)
	}
	return b, nil
}

// maxErrorText caps the upstream's text in one tool error. A result is
// capped at Options.MaxOutputBytes; an error message, which a server may
// make as long as a line (16 MiB), is kept to what a reader needs.
const maxErrorText = 4096

// clipText cuts text (already masked: cutting first could leave part of a
// secret unmasked) to maxErrorText bytes of valid UTF-8, saying so.
func clipText(text string) string {
	if len(text) <= maxErrorText {
		return text
	}
	return strings.ToValidUTF8(text[:maxErrorText], "") + fmt.Sprintf("… (%d more bytes cut)", len(text)-maxErrorText)
}

// maxOutputItems caps the content items of one result.
const maxOutputItems = 1000

// capResult keeps content items in order while they fit in maxBytes and
// maxItems, then adds a text item saying what was dropped; structuredContent
// that does not fit in what is left is dropped too (and said so). A result
// within both limits is returned as it is.
func capResult(r *tools.CallResult, maxBytes, maxItems int) *tools.CallResult {
	total := len(r.Content) + len(r.StructuredContent) + len(r.Meta)
	if total <= maxBytes && (len(r.Content) < 2*maxItems+3 || countItems(r.Content) <= maxItems) {
		// An array of more than maxItems values takes at least
		// 2*(maxItems+1)+1 bytes (a byte each, commas, brackets): a
		// shorter one is not decoded to count them, on every call.
		return r
	}
	dec := jsontext.NewDecoder(bytes.NewReader(r.Content))
	dec.ReadToken() // '['
	var kept []jsontext.Value
	out := &tools.CallResult{IsError: r.IsError, Meta: r.Meta}
	if len(r.Meta) > maxBytes/2 {
		out.Meta = nil // _meta is the server's, and not worth the content's room
	}
	used, dropped := len(out.Meta), 0
	for dec.PeekKind() != ']' && dec.PeekKind() != 0 {
		v, err := dec.ReadValue()
		if err != nil {
			break
		}
		if dropped == 0 && used+len(v) <= maxBytes && len(kept) < maxItems {
			kept = append(kept, v.Clone())
			used += len(v)
		} else {
			dropped++
		}
	}
	note := fmt.Sprintf("[clawd: the upstream result was %d bytes; %d content item(s) over the limit of %d bytes / %d items were dropped", total, dropped, maxBytes, maxItems)
	if len(r.StructuredContent) > 0 && used+len(r.StructuredContent) <= maxBytes {
		out.StructuredContent = r.StructuredContent
	} else if len(r.StructuredContent) > 0 {
		note += "; structuredContent was dropped"
	}
	if len(r.Meta) > 0 && out.Meta == nil {
		note += "; _meta was dropped"
	}
	note += "]"
	marker, _ := json.Marshal(map[string]string{"type": "text", "text": note})
	var b bytes.Buffer
	b.WriteByte('[')
	for _, v := range kept {
		b.Write(v)
		b.WriteByte(',')
	}
	b.Write(marker)
	b.WriteByte(']')
	out.Content = b.Bytes()
	return out
}

func countItems(arr jsontext.Value) int {
	dec := jsontext.NewDecoder(bytes.NewReader(arr))
	if _, err := dec.ReadToken(); err != nil {
		return 0
	}
	n := 0
	for dec.PeekKind() != ']' && dec.PeekKind() != 0 {
		if err := dec.SkipValue(); err != nil {
			break
		}
		n++
	}
	return n
}
