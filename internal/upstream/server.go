package upstream

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawde/clawd/internal/support/proc"
	"github.com/clawde/clawd/internal/support/safetext"
	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// server is one configured upstream: its supervisor goroutine keeps at
// most one session (for stdio: one process) alive, reconnecting with
// backoff and jitter, and owns the tool cache.
type server struct {
	m       *Manager
	cfg     ServerConfig
	ring    *proc.Ring
	originV tools.Origin
	ident   atomic.Pointer[identity.Config] // nil: cfg.Identity

	stop    chan struct{} // closed to end the supervisor
	done    chan struct{} // closed when it has ended
	after   chan struct{} // nil, or the done of the stopped server of this name run waits for
	refresh chan chan error
	changed chan struct{} // cap 1: the upstream said its tools changed

	mu            sync.Mutex
	state         string
	lastErr       string
	lastConnected time.Time
	pid           int
	sess          *session
	tools         []upstreamTool
	toolDefs      map[string]string   // tool name -> Def.SHA256 of its first listing in tools
	hidden        bool                // tools not offered (error, unavailable, disabled)
	approval      map[string]Approval // by upstream tool name, set by toolsChanged
	swapped       chan struct{}       // closed and replaced whenever sess changes
	stopOnce      sync.Once
}

func newServer(m *Manager, cfg ServerConfig, ring *proc.Ring) *server {
	if ring == nil {
		ring = proc.NewRing(m.opts.LogBytes)
	}
	return &server{m: m, cfg: cfg, ring: ring, state: StateConnecting,
		stop: make(chan struct{}), done: make(chan struct{}),
		refresh: make(chan chan error), changed: make(chan struct{}, 1),
		swapped: make(chan struct{}), hidden: true}
}

func (s *server) hooks() sessionHooks {
	return sessionHooks{
		listChanged: func() {
			select {
			case s.changed <- struct{}{}:
			default:
			}
		},
		started: func(p *proc.Process) {
			s.mu.Lock()
			s.pid = p.Pid()
			s.mu.Unlock()
		},
	}
}

// attempt dials and lists tools once.
func (s *server) attempt(ctx context.Context) (*session, []upstreamTool, error) {
	sess, err := s.m.dial(ctx, s.cfg, s.ring, s.hooks())
	if err != nil {
		return nil, nil, err
	}
	ts, err := listTools(ctx, sess, s.cfg.readTimeout(), s.m.opts.MaxPages, s.m.opts.MaxTools, s.m.opts.MaxListBytes)
	if err != nil {
		sess.close()
		return nil, nil, err
	}
	return sess, ts, nil
}

// run is the supervisor. first, if not nil, is a session already
// connected (a replacement that initialized before the swap).
func (s *server) run(first *session, firstTools []upstreamTool) {
	defer close(s.done)
	defer func() {
		// A replacement's session handed to a server stopped before run
		// began (removed, disabled, changed again, clawd closing): never
		// installed, so nobody else ends its process.
		if first != nil {
			first.close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	select {
	case <-s.stop: // already: the loop below must not install first
		cancel()
	default:
	}
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if s.after != nil {
		// The previous server of this name is still stopping its process.
		// Even if this one is stopped meanwhile, done waits for it, so the
		// next one waits for both.
		s.setState(StateConnecting, "")
		select {
		case <-s.after:
		case <-ctx.Done():
			<-s.after
			return
		}
	}
	failures := 0
	var reply chan error // a Refresh waiting for the next attempt
	for ctx.Err() == nil {
		sess, ts, err := first, firstTools, error(nil)
		first = nil
		if sess == nil {
			s.setState(StateConnecting, "")
			sess, ts, err = s.attempt(ctx)
		}
		if err == nil {
			s.install(sess, ts)
			if reply != nil { // after install: a Refresh that returned nil finds the server connected
				reply <- nil
				reply = nil
			}
		}
		if err == nil {
			var lost bool
			if lost, reply = s.serve(ctx, sess); !lost {
				failures = 0 // a Refresh, or stop
				continue
			}
			if time.Since(sess.started) >= s.m.opts.StableAfter {
				failures = 0
			}
			err = exitError(sess)
		}
		if ctx.Err() != nil {
			if reply != nil {
				reply <- err
			}
			return
		}
		failures++
		if reply = s.afterFailure(ctx, err, failures, reply); reply != nil {
			failures = 0
		}
	}
}

// serve keeps sess until it ends (lost), a Refresh comes (its reply
// channel is returned) or the supervisor stops; then sess is closed.
func (s *server) serve(ctx context.Context, sess *session) (lost bool, reply chan error) {
	defer func() {
		s.uninstall(sess)
		sess.close()
		why := "stopped (the server was removed, disabled or changed, or clawd is stopping)"
		switch {
		case lost:
			why = exitError(sess).Error()
		case reply != nil:
			why = "reconnecting on request (refresh, or an allowlist changed)"
		}
		s.m.event(Event{Server: s.cfg.Name, Transport: s.cfg.Transport, Kind: EventDisconnect, Detail: s.maskLine(why)})
	}()
	var next time.Time          // list_changed may make clawd list the tools again from then on
	var relist <-chan time.Time // fires when a list_changed waiting for its turn may list
	for {
		select {
		case <-sess.done:
			return true, nil
		case <-s.changed:
			// A walk, then a pause (relistGap): notifications that come
			// meanwhile are one (s.changed holds one), so a server that
			// says its tools changed after every listing does not keep
			// clawd listing, recording and auditing them without pause.
			if relist == nil {
				relist = time.After(max(time.Until(next), 0))
			}
		case <-relist:
			relist = nil
			begin := time.Now()
			if ts, err := listTools(ctx, sess, s.cfg.readTimeout(), s.m.opts.MaxPages, s.m.opts.MaxTools, s.m.opts.MaxListBytes); err == nil {
				s.setTools(ts)
			} else if ctx.Err() == nil {
				s.noteErr(err)
			}
			next = time.Now().Add(relistGap(time.Since(begin)))
		case r := <-s.refresh:
			return false, r
		case <-ctx.Done():
			return false, nil
		}
	}
}

// relistGap is the pause after a walk of a server's tools that took took
// before its notifications/tools/list_changed make clawd walk them again:
// at least relistEvery from the walk's start, and four times the walk, so
// that one server's listings (slow to answer, or costly to pin) take at
// most a fifth of clawd's time.
func relistGap(took time.Duration) time.Duration {
	return max(relistEvery-took, 4*took)
}

// relistEvery is the least time between the starts of two walks of a
// server's tools that its notifications/tools/list_changed cause.
const relistEvery = time.Second

// afterFailure records err, answers the Refresh that asked for the failed
// attempt (if one did) and waits: for a Refresh when the configuration
// must change (unavailable) or after MaxFailures in a row (error), else
// for the backoff. It returns a Refresh's reply channel if one came.
//
// The Refresh is answered after the state is recorded, so its caller
// finds the server unavailable or in error, not still connecting: the
// daemon's retries decide from that state whether to try again.
func (s *server) afterFailure(ctx context.Context, err error, failures int, asked chan error) chan error {
	var ce *errConfig
	wait := time.Duration(-1) // until a Refresh
	switch {
	case errors.As(err, &ce):
		s.fail(StateUnavailable, err)
		if kind := refusalOf(err); kind != "" {
			s.m.event(Event{Server: s.cfg.Name, Transport: s.cfg.Transport, Kind: kind, Detail: s.maskLine(err.Error())})
		}
	case failures >= s.m.opts.MaxFailures:
		s.fail(StateError, err)
	default:
		s.fail("", err)
		wait = s.backoff(failures)
	}
	if asked != nil {
		asked <- err
	}
	return s.wait(ctx, wait)
}

// exitError says how a lost session ended.
func exitError(sess *session) error {
	if sess.proc != nil {
		if st, _ := sess.proc.Wait(); st != nil {
			return errors.New("the server exited (" + st.String() + ")")
		}
	}
	return errors.New("the connection was lost")
}

// wait sleeps d (d < 0: until a Refresh) and returns a Refresh's reply
// channel if one came, nil otherwise.
func (s *server) wait(ctx context.Context, d time.Duration) chan error {
	var timer <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case r := <-s.refresh:
		return r
	case <-timer:
	case <-ctx.Done():
	}
	return nil
}

// backoff is BackoffBase doubled per failure, capped at BackoffMax, with
// full jitter in its upper half (so servers that failed together do not
// retry together).
func (s *server) backoff(failures int) time.Duration {
	d := s.m.opts.BackoffBase
	for i := 1; i < failures && d < s.m.opts.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, s.m.opts.BackoffMax)
	return d/2 + rand.N(d/2+1)
}

// install makes sess the live session. The tools are published (and the
// registry re-indexed) before the state says connected, so whoever sees
// "connected" also finds the tools.
func (s *server) install(sess *session, ts []upstreamTool) {
	s.mu.Lock()
	s.sess = sess
	s.setToolsLocked(ts)
	s.hidden = false
	s.mu.Unlock()
	s.m.toolsChanged()
	s.mu.Lock()
	s.state = StateConnected
	s.lastConnected = time.Now()
	if sess.proc != nil {
		s.pid = sess.proc.Pid()
	}
	close(s.swapped)
	s.swapped = make(chan struct{})
	s.mu.Unlock()
	s.m.report(s)
	s.m.event(Event{Server: s.cfg.Name, Transport: s.cfg.Transport, Kind: EventConnect, Detail: s.connectDetail(sess, len(ts)), PID: sess.pid()})
}

func (s *server) uninstall(sess *session) {
	s.mu.Lock()
	if s.sess == sess {
		s.sess = nil
		s.pid = 0
		// No session is no longer connected, in the same step: a status
		// read now must not say connected while calls find no session.
		if s.state == StateConnected {
			s.state = StateStale
		}
		close(s.swapped)
		s.swapped = make(chan struct{})
	}
	s.mu.Unlock()
}

func (s *server) setTools(ts []upstreamTool) {
	s.mu.Lock()
	s.setToolsLocked(ts)
	s.mu.Unlock()
	s.m.toolsChanged()
	s.m.report(s)
}

// setToolsLocked publishes ts and the index sessionFor looks a call's
// tool up in (a server may list thousands). A name listed twice is found
// at its first listing, as a scan would. s.mu is held.
func (s *server) setToolsLocked(ts []upstreamTool) {
	s.tools = ts
	s.toolDefs = make(map[string]string, len(ts))
	for _, t := range ts {
		if _, seen := s.toolDefs[t.Name]; !seen {
			s.toolDefs[t.Name] = t.Def.SHA256
		}
	}
}

func (s *server) setState(state, lastErr string) {
	s.mu.Lock()
	changed := s.state != state
	if !(state == StateConnecting && len(s.tools) > 0) {
		s.state = state
	} else {
		s.state = StateStale
	}
	if lastErr != "" {
		s.lastErr = lastErr
	}
	s.mu.Unlock()
	if changed {
		s.m.report(s)
	}
}

func (s *server) noteErr(err error) {
	s.mu.Lock()
	s.lastErr = s.maskLine(err.Error())
	s.mu.Unlock()
	s.m.report(s)
}

// fail records err. state "" keeps the server stale when it has cached
// tools and connecting otherwise; error and unavailable hide its tools.
func (s *server) fail(state string, err error) {
	hide := state == StateError || state == StateUnavailable
	s.mu.Lock()
	if state == "" {
		state = StateConnecting
		if len(s.tools) > 0 {
			state = StateStale
		}
	}
	wasHidden := s.hidden
	s.hidden = s.hidden || hide
	s.mu.Unlock()
	// The tools go before the state says so: whoever sees the state sees
	// the registry without them.
	if hide && !wasHidden {
		s.m.toolsChanged()
	}
	s.mu.Lock()
	s.state = state
	s.lastErr = s.maskLine(err.Error())
	s.mu.Unlock()
	s.m.opts.Logger.Warn("upstream server failed", "server", s.cfg.Name, "state", state, "err", s.mask(err.Error()))
	s.m.report(s)
}

// mask hides the resolved values of the server's env and headers, the
// secrets of its URL (secrets.MaskURL) and what looks like a secret, in
// text shown to users (errors, logs, audit rows), and strips the terminal
// escapes and invisible characters an upstream may have put in it
// (safetext).
func (s *server) mask(text string) string { return s.maskWith(text, s.secretValues()) }

// maskWith is mask with the secret values already listed.
func (s *server) maskWith(text string, vals []string) string {
	// The Go client's errors quote the whole URL, whose query or path may
	// hold a key under a name the text masker does not know (?key=...).
	return maskValues(text, vals, s.cfg.URL)
}

// maskValues cleans text (safetext), masks vals in it (longest first) and
// then what looks like a secret, and rawURL's secrets if it is not "".
// The text is cleaned first: cleaning removes invisible characters, so a
// value split by one (a zero-width space) would pass the masker and come
// out whole.
func maskValues(text string, vals []string, rawURL string) string {
	text = safetext.Clean(text)
	for _, v := range vals {
		text = strings.ReplaceAll(text, v, secrets.Masked)
	}
	return secrets.MaskTextWithURL(text, rawURL)
}

// secretValues are the resolved values of the server's env and headers of
// at least 4 bytes, longest first, so a value containing another is masked
// whole.
func (s *server) secretValues() []string {
	var vals []string
	for _, m := range []map[string]string{s.cfg.Env, s.cfg.Headers} {
		if r, err := expandMap(m, s.m.opts.LookupEnv); err == nil {
			for _, v := range r {
				if len(v) >= 4 {
					vals = append(vals, v)
				}
			}
		}
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	return vals
}

// maskCut masks a piece of a secret value at either edge of text, a tail
// the stderr ring kept: its start may be the end of a value whose first
// bytes were overwritten, its end the start of one not fully written yet.
// Such a piece is not the value, so mask alone would show it. Pieces under
// 4 bytes are left (too likely to be anything).
func maskCut(text string, vals []string) string {
	for _, v := range vals {
		for k := len(v) - 1; k >= 4; k-- {
			if strings.HasPrefix(text, v[len(v)-k:]) {
				text = secrets.Masked + text[k:]
				break
			}
		}
		for k := len(v) - 1; k >= 4; k-- {
			if strings.HasSuffix(text, v[:k]) {
				text = text[:len(text)-k] + secrets.Masked
				break
			}
		}
	}
	return text
}

// maskLine is mask for a status shown on one line (last_error, events, the
// CLI's error for mcp test): an upstream's text with newlines would
// otherwise print lines that look like clawd's own output.
func (s *server) maskLine(text string) string { return safetext.Line(s.mask(text)) }

// logs is the server's stderr ring, masked. Besides its own values it
// masks every other server's (Manager.SecretValues): a referenced variable
// is in clawd's environment, which every stdio server inherits, so a
// server that prints its environment prints another server's token too.
// Callers must not hold s.m.mu.
func (s *server) logs() []byte {
	if s.cfg.Transport != TransportStdio {
		return nil
	}
	vals := s.m.withSecretValues(s.secretValues())
	return []byte(s.maskWith(maskCut(s.ring.String(), vals), vals))
}

// withSecretValues is own and every server's values (SecretValues), longest
// first, so that no value is masked in part before a longer one holding it.
// Callers must not hold m.mu.
func (m *Manager) withSecretValues(own []string) []string {
	vals := append(slices.Clone(own), m.SecretValues()...)
	slices.SortStableFunc(vals, func(a, b string) int { return len(b) - len(a) })
	return vals
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Transport: s.cfg.Transport, State: s.state, LastError: s.lastErr,
		LastConnected: s.lastConnected, PID: s.pid}
	names := s.m.namesOf(s.cfg.Name)
	for _, t := range s.tools {
		ti := ToolInfo{Original: displayName(t.Name), Description: t.Description, InputSchema: t.InputSchema, LastSeen: t.LastSeen,
			SHA256: t.Def.SHA256, Approval: s.approvalOfLocked(t.Name)}
		if n, ok := names[t.Name]; ok {
			ti.Exposed, ti.Note = n.name, n.note
		}
		switch ti.Approval {
		case ApprovalInvalid:
			ti.Note = strings.TrimPrefix(ti.Note+"; not offered: "+t.DefErr, "; ")
		case ApprovalNew, ApprovalChanged:
			ti.Note = strings.TrimPrefix(ti.Note+"; not offered until approved (clawd mcp approve "+s.cfg.Name+" "+ti.Exposed+")", "; ")
		}
		if s.hidden {
			ti.Note = strings.TrimPrefix(ti.Note+"; not offered while the server is "+s.state, "; ")
		}
		st.Tools = append(st.Tools, ti)
	}
	st.ToolCount = len(st.Tools)
	return st
}

// current returns the live session, or nil and why there is none.
func (s *server) current() (*session, chan struct{}, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.currentLocked()
}

// currentLocked is current with s.mu held.
func (s *server) currentLocked() (*session, chan struct{}, string) {
	if s.sess != nil {
		return s.sess, s.swapped, "" // the common case: no text to build
	}
	why := s.state
	if s.lastErr != "" {
		why += " (" + s.lastErr + ")"
	}
	return nil, s.swapped, why
}

// offered returns the tools to offer: none while hidden.
func (s *server) offered() []upstreamTool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hidden {
		return nil
	}
	return s.tools
}

// doRefresh asks the supervisor to reconnect now and waits for the
// attempt's outcome.
func (s *server) doRefresh(ctx context.Context) error {
	r := make(chan error, 1)
	select {
	case s.refresh <- r:
	case <-s.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-s.done: // the supervisor ended; it answers before it ends if it can
		select {
		case err := <-r:
			return s.refreshErr(err)
		default:
			return ErrClosed
		}
	case err := <-r:
		return s.refreshErr(err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refreshErr is a Refresh's answer as its caller gets it.
func (s *server) refreshErr(err error) error {
	if err != nil {
		// Callers log and print it: the server's secrets masked, as in its
		// status (the kind of error is kept for errors.As).
		return &maskedError{msg: s.mask(err.Error()), err: err}
	}
	return nil
}

// maskedError shows a masked message and unwraps to the original error.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// shutdown ends the supervisor and waits for it (it closes the session,
// which stops a stdio child's whole group).
func (s *server) shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() { close(s.stop) })
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var _ tools.Provider = (*provider)(nil)
