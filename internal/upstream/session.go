package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/support/netguard"
	"github.com/clawde/clawd/internal/support/proc"
)

// clientProtocol is the version clawd asks upstreams for. Asking for
// 2026-07-28 would make the go-sdk client send server/discover first, and
// a stdio server that does not know it may exit, leaving nothing to fall
// back to; initialize with 2025-11-25 is understood by every server that
// speaks 2025-11-25 or later, and older ones negotiate down.
const clientProtocol = "2025-11-25"

// errConfig marks failures the configuration must fix (command not found,
// a ${VAR} not set): retrying will not help, the state is unavailable.
type errConfig struct{ err error }

func (e *errConfig) Error() string { return e.err.Error() }
func (e *errConfig) Unwrap() error { return e.err }

// session is one live client session with an upstream.
type session struct {
	cs      *mcp.ClientSession
	capture *captureConn // stdio only: raw tools/list results
	stdio   *stdioConn   // stdio only: tools/call goes here directly (stdiocall.go)
	proc    *proc.Process
	guard   *netguard.Guard // http/sse: the dialer's egress check
	done    chan struct{}   // closed when the session ended
	started time.Time
	cancel  context.CancelFunc // ends the connection's own context
	// progress routes the upstream's notifications/progress to the calls
	// that asked for them (progress.go).
	progress *progressRoutes
	launch   Launch // stdio: what was checked before the spawn
}

func (s *session) close() {
	if s.stdio != nil {
		// The SDK's Close waits for its handlers, and a handler's answer
		// to the server's own request may wait on a child that stopped
		// reading its stdin: without this, for a minute per answer.
		s.stdio.stopWriting()
	}
	s.cs.Close()
	s.cancel()
	if s.proc != nil {
		s.proc.Wait()
	}
}

// sessionHooks are what a session reports back.
type sessionHooks struct {
	listChanged func()
	started     func(*proc.Process)
}

// dial starts or connects to cfg's server and initializes, bounded by its
// ConnectTimeout and ctx.
func (m *Manager) dial(ctx context.Context, cfg ServerConfig, stderr *proc.Ring, hooks sessionHooks) (*session, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sess := &session{done: make(chan struct{}), started: time.Now(), cancel: cancel, progress: newProgressRoutes()}
	t, ct, err := m.transport(cfg, sess, life, stderr, hooks)
	if err != nil {
		cancel()
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "clawd", Version: "1"}, &mcp.ClientOptions{
		Logger:       m.opts.Logger,
		Capabilities: &mcp.ClientCapabilities{},
		// clawd speaks 2025-11-25 to upstreams and declares no capability:
		// a result asking for input (2026-07-28's input_required) is not
		// answered and the call sent again, up to ten times per call (same
		// arguments, same identity token), as the SDK would by default. It
		// stays the result, which carries no content: a tool error.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			if hooks.listChanged != nil {
				hooks.listChanged()
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			sess.progress.deliver(req.Params)
		},
	})
	client.AddReceivingMiddleware(answerOnly)
	cctx, ccancel := context.WithTimeout(ctx, cfg.connectTimeout())
	defer ccancel()
	cs, err := client.Connect(cctx, t, &mcp.ClientSessionOptions{ProtocolVersion: clientProtocol})
	if err != nil {
		cancel()
		if sess.proc != nil {
			// Connect closes the session it made on failure; a transport
			// that failed before that leaves the child to us.
			sess.proc.Stop(m.opts.StopGrace)
		}
		if sess.guard != nil && sess.guard.Refused() != nil {
			// The dialer refused the address the name resolved to:
			// retrying reaches the same refusal, the allowlist must change.
			return nil, refusal(EventEgressRefused, sess.guard.Refused())
		}
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("no answer to initialize within %v (connect timeout): %w", cfg.connectTimeout(), err)
		}
		return nil, fmt.Errorf("initialize: %w", err)
	}
	sess.cs = cs
	if ct != nil {
		sess.capture = ct.conn
		sess.stdio, _ = ct.conn.Connection.(*stdioConn)
	}
	if err := recheckScript(sess.launch); err != nil {
		cancel()
		sess.close()
		return nil, &errConfig{err}
	}
	go func() { cs.Wait(); close(sess.done) }()
	return sess, nil
}

// answerOnly lets through the requests of the server's that clawd answers
// itself, ping and roots/list (an empty list: clawd shares no roots), and
// every notification; any other request is refused as a method clawd does
// not have. The go-sdk client answers sampling and elicitation with an
// error already, but it takes completion/complete from a server as a call
// to make: it sends the same request back to the server and waits for the
// answer without a deadline. A server that asked again and again, and held
// clawd's requests open, held a goroutine (and over HTTP a connection) of
// clawd's per request, unbounded (the bounds on clawd's answers count
// answers, not requests), and kept the session from closing.
func answerOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "ping" || method == "roots/list" || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		// method is one the SDK knows (it refused any other before this).
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "clawd does not answer " + method + " from upstream servers"}
	}
}

// transport builds cfg's transport: clawd's stdio transport (wrapped to
// capture raw results) or the SDK's HTTP ones behind an origin-pinned
// client. Errors are configuration errors (errConfig).
func (m *Manager) transport(cfg ServerConfig, sess *session, life context.Context, stderr *proc.Ring, hooks sessionHooks) (mcp.Transport, *captureTransport, error) {
	switch cfg.Transport {
	case TransportStdio:
		env, err := expandMap(cfg.Env, m.opts.LookupEnv)
		if err != nil {
			return nil, nil, &errConfig{fmt.Errorf("env %w", err)}
		}
		l, err := resolveLaunch(cfg, env, m.hasher())
		if err != nil {
			return nil, nil, &errConfig{err}
		}
		path := l.Exec
		// The descriptor hashed here is the one executed (proc.Cmd.ExecFile).
		exe, sum, exeBefore, err := openHashed(m.hasher(), path)
		if err != nil {
			return nil, nil, &errConfig{err}
		}
		l.ExecSHA256 = sum
		sess.launch = l
		if err := m.verify(cfg.Name, l); err != nil {
			exe.Close()
			return nil, nil, refusal(EventRefuse, err)
		}
		// Every stdio child is marked, with or without a token: a clawd
		// started as an upstream sees the mark and starts no upstreams of
		// its own (no loops, even from `clawd mcp test`).
		owner := m.opts.OwnerToken
		if owner == "" {
			owner = "-"
		}
		// The spawn id traces an orphan the server leaves to this spawn
		// (procs.go).
		spawn := spawnSeq.Add(1)
		var own []string // the server's values, before the mark joins them
		for _, v := range env {
			if len(v) >= 4 {
				own = append(own, v)
			}
		}
		mask := func(text string) string { return maskValues(text, m.withSecretValues(own), "") }
		env[OwnerEnv] = ownerMark(owner, os.Getpid()) + "." + strconv.FormatUint(spawn, 10)
		ct := &captureTransport{inner: &stdioTransport{
			path: path, exe: exe, exeBefore: exeBefore, exeSum: sum, hasher: m.hasher(), args: cfg.Args, dir: cfg.Cwd, env: envList(env), stderr: stderr,
			grace: m.opts.StopGrace, logger: m.opts.Logger, mask: mask,
			started: func(p *proc.Process) {
				sess.proc = p
				m.spawnStarted(spawn, cfg.Name, p)
				m.event(Event{Server: cfg.Name, Transport: cfg.Transport, Kind: EventSpawn, PID: p.Pid(), Path: path, Args: cfg.Args, SHA256: l.ExecSHA256})
				if hooks.started != nil {
					hooks.started(p)
				}
			},
			ended:    func() { m.spawnEnded(spawn) },
			progress: sess.progress,
		}}
		return ct, ct, nil
	case TransportHTTP, TransportSSE:
		hdr, err := expandMap(cfg.Headers, m.opts.LookupEnv)
		if err != nil {
			return nil, nil, &errConfig{fmt.Errorf("header %w", err)}
		}
		guard, err := m.egressGuard(cfg)
		if err != nil {
			return nil, nil, err
		}
		hc, err := originClient(cfg.URL, hdr, cfg.connectTimeout(), guard, m.opts.Resolver)
		if err != nil {
			return nil, nil, refusal(EventEgressRefused, err)
		}
		sess.guard = guard
		if cfg.Transport == TransportHTTP {
			hc.Transport = &captureRoundTripper{inner: hc.Transport, progress: sess.progress} // raw results (capture_http.go)
		}
		// MaxEventSize is set, not left to its default: the go-sdk's
		// Streamable HTTP client documents 0 as 16 MiB but reads an event
		// without any bound when it is 0.
		var t mcp.Transport = &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxEventSize: maxBody}
		if cfg.Transport == TransportHTTP {
			t = &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxRetries: -1, MaxEventSize: maxBody}
		}
		return &detachTransport{inner: t, life: life}, nil, nil
	}
	return nil, nil, &errConfig{fmt.Errorf("transport %q: use stdio, http or sse", cfg.Transport)}
}

// egressGuard is the dialer check of an http/sse server's connections: the
// policy Options.VerifyOrigin gives for its URL's origin (an error refuses
// the server before anything is sent), or without VerifyOrigin the default
// policy (no private addresses).
func (m *Manager) egressGuard(cfg ServerConfig) (*netguard.Guard, error) {
	o, err := netguard.OriginOfURL(cfg.URL)
	if err != nil {
		return nil, refusal(EventEgressRefused, fmt.Errorf("url: %w", err))
	}
	p := netguard.Policy{Origin: o}
	if m.opts.VerifyOrigin != nil {
		if p, err = m.opts.VerifyOrigin(cfg.Name, o); err != nil {
			return nil, refusal(EventEgressRefused, err)
		}
		p.Origin = o // the policy is for this origin, whatever the hook said
	}
	return netguard.NewGuard(p), nil
}

// detachTransport connects with a context that outlives Connect's: the
// legacy SSE client reads its event stream with the context given to
// Connect, so a connect timeout would otherwise end the session later. A
// connect that is still running when ctx ends is abandoned (its context,
// life, is the session's and is cancelled on failure).
type detachTransport struct {
	inner mcp.Transport
	life  context.Context
}

func (t *detachTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	type res struct {
		c   mcp.Connection
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := t.inner.Connect(t.life)
		ch <- res{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// upstreamTool is one tool as the upstream listed it.
type upstreamTool struct {
	Name string
	// Title, Description and the prose in the schemas are cleaned for
	// display (forDisplay); Def is the hash of what the upstream sent.
	Title        string
	Description  string
	InputSchema  jsontext.Value
	OutputSchema jsontext.Value
	Annotations  jsontext.Value
	LastSeen     time.Time
	Def          ToolDefinition
	// DefErr says why the definition could not be pinned; such a tool is
	// never offered.
	DefErr string
}

// listTools walks tools/list, bounded by timeout, at most maxPages pages,
// maxTools tools and maxBytes of answers (each page is one message, at most
// 16 MiB; what is kept of a tool, its cleaned copy and its canonical form,
// is held for as long as the server is connected and recorded in the
// database, so all pages together are bounded too); a cursor seen before
// ends the walk with an error (the go-sdk iterator would loop forever).
func listTools(ctx context.Context, sess *session, timeout time.Duration, maxPages, maxTools, maxBytes int) ([]upstreamTool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out []upstreamTool
	seen := map[string]bool{}
	cursor := ""
	size := 0
	now := time.Now()
	for page := 0; ; page++ {
		if page >= maxPages {
			return nil, fmt.Errorf("tools/list: more than %d pages; clawd stops there", maxPages)
		}
		cctx, sl := withCapture(ctx)
		res, err := sess.cs.ListTools(cctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			if sess.capture != nil {
				sess.capture.forget(sl)
			}
			if ctx.Err() == context.DeadlineExceeded {
				return nil, fmt.Errorf("tools/list: no answer within %v (read timeout)", timeout)
			}
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		ts, next, n, err := decodeToolsPage(sl.get(), res, now)
		if err != nil {
			return nil, err
		}
		if size += n; size > maxBytes {
			return nil, fmt.Errorf("tools/list: the answers take more than %d MiB; clawd stops there", maxBytes>>20)
		}
		out = append(out, ts...)
		if len(out) > maxTools {
			return nil, fmt.Errorf("tools/list: more than %d tools; clawd stops there", maxTools)
		}
		if next == "" {
			return onceEach(out), nil
		}
		if seen[next] {
			return nil, fmt.Errorf("tools/list: the server repeated cursor %q; stopped after %d pages", clip([]byte(next), 64), page+1)
		}
		seen[next] = true
		cursor = next
	}
}

// onceEach keeps the first listing of each tool name. A name listed again
// with the same definition is a repetition (pages that overlap, say); with
// another definition, the server says two things about one tool, and
// which one a client is shown, which one approval is judged on and which
// one the server runs cannot be told apart: such a tool is never offered
// (DefErr), whichever of its definitions was approved.
func onceEach(ts []upstreamTool) []upstreamTool {
	at := make(map[string]int, len(ts))
	out := ts[:0]
	for _, t := range ts {
		i, seen := at[t.Name]
		if !seen {
			at[t.Name] = len(out)
			out = append(out, t)
			continue
		}
		if first := &out[i]; first.Def.SHA256 != t.Def.SHA256 && first.DefErr == "" {
			first.DefErr = "the server lists it more than once, with different definitions"
		}
	}
	return out
}

// decodeToolsPage reads one page from the raw result when it was captured
// (stdio: schemas kept byte for byte), else from the SDK's decoded one,
// and says how many bytes that was. Tools without a name are dropped; a
// missing or non-object input schema becomes {"type":"object"}.
func decodeToolsPage(raw []byte, res *mcp.ListToolsResult, now time.Time) ([]upstreamTool, string, int, error) {
	var page struct {
		Tools      []jsontext.Value `json:"tools"`
		NextCursor string           `json:"nextCursor"`
	}
	if raw != nil {
		if err := jsonv2.Unmarshal(raw, &page); err != nil {
			return nil, "", 0, fmt.Errorf("tools/list: the server's answer is not a tools list: %w", err)
		}
	} else {
		b, err := json.Marshal(res)
		if err == nil {
			err = jsonv2.Unmarshal(b, &page)
		}
		raw = b
		if err != nil {
			return nil, "", 0, fmt.Errorf("tools/list: %w", err)
		}
	}
	size := len(raw)
	out := make([]upstreamTool, 0, len(page.Tools))
	for _, raw := range page.Tools {
		var t struct {
			Name         string         `json:"name"`
			Title        string         `json:"title"`
			Description  string         `json:"description"`
			InputSchema  jsontext.Value `json:"inputSchema"`
			OutputSchema jsontext.Value `json:"outputSchema"`
			Annotations  jsontext.Value `json:"annotations"`
		}
		if err := jsonv2.Unmarshal(raw, &t); err != nil {
			return nil, "", 0, fmt.Errorf("tools/list: the server's answer is not a tools list: %w", err)
		}
		if t.Name == "" {
			continue
		}
		schema := t.InputSchema
		if len(schema) == 0 || schema.Kind() != '{' {
			schema = jsontext.Value(`{"type":"object"}`)
		} else {
			schema = schema.Clone()
			schema.Compact()
		}
		ann := t.Annotations
		if len(ann) > 0 && ann.Kind() != '{' {
			ann = nil
		}
		outSchema := t.OutputSchema
		if len(outSchema) > 0 && outSchema.Kind() != '{' {
			outSchema = nil
		}
		def, derr := canonicalDefinition(raw)
		ut := upstreamTool{Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: schema, OutputSchema: outSchema.Clone(), Annotations: ann.Clone(), LastSeen: now, Def: def}
		switch {
		case derr != nil:
			ut.DefErr = derr.Error()
		case hiddenOutsideProse(schema) || hiddenOutsideProse(outSchema) || hiddenOutsideProse(ann):
			ut.DefErr = "its schema or annotations carry control or invisible characters outside descriptions (an enum, const or default value, or a property name), which clawd can neither show a reviewer nor remove"
		}
		out = append(out, ut.forDisplay())
	}
	return out, page.NextCursor, size, nil
}

// isSessionMissing: the HTTP server forgot the session (404 on a known
// session id).
func isSessionMissing(err error) bool { return errors.Is(err, mcp.ErrSessionMissing) }
