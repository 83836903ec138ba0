package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// applyPlan is what one Apply changes, decided under m.mu and carried out
// after it is released.
type applyPlan struct {
	stopping  []*server
	removed   []string // provider ids to take out of the registry
	added     []*provider
	started   []*server
	replacing []replaceJob
}

// replacement is a replace (a changed configuration connecting beside the
// running server) in flight for one server name. A newer one cancels it
// and starts no process before it is done (its attempt, and the process
// that attempt started, have ended), so quick edits never pile up
// processes of one server.
type replacement struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	prev   *replacement // the one it superseded, or nil
	// err is how it ended, set before done is closed: nil once swapped
	// in, the attempt's error (masked) if it failed, errSuperseded if it
	// was abandoned.
	err error
}

// errSuperseded ends a replacement abandoned for a newer configuration,
// a removal or a stop.
var errSuperseded = errors.New("the configuration changed again, or the server was removed or stopped, before it connected")

type replaceJob struct {
	cfg ServerConfig
	r   *replacement
}

// cancelReplaceLocked abandons name's replacement in flight, if any, and
// returns its done channel (nil if none). It stays in m.replacements until
// it is done, so a newer replacement still waits for it. m.mu is held.
func (m *Manager) cancelReplaceLocked(name string) chan struct{} {
	r := m.replacements[name]
	if r == nil {
		return nil
	}
	r.cancel()
	return r.done
}

// retireLocked makes done, closed once the stopped server cfg is, what the
// next server of its name, and of its row id (a rename: the same server
// under another name, also one that only changes case), waits for. The
// entries go once done is closed, so names removed and never added again
// (mcp add and rm of ever new names) leave nothing behind. m.mu is held.
func (m *Manager) retireLocked(cfg ServerConfig, done chan struct{}) {
	name, id := cfg.Name, cfg.ID
	select {
	case <-done:
		delete(m.retiring, name) // nothing to wait for
		if id != 0 {
			delete(m.retiringID, id)
		}
		return
	default:
	}
	m.retiring[name] = done
	if id != 0 {
		m.retiringID[id] = done
	}
	go func() {
		<-done
		m.mu.Lock()
		if m.retiring[name] == done {
			delete(m.retiring, name)
		}
		if id != 0 && m.retiringID[id] == done {
			delete(m.retiringID, id)
		}
		m.mu.Unlock()
	}()
}

// retiredLocked returns what a new server of cfg waits for before it
// starts a process: the done of the stopped server of its name and of its
// row id still ending (retireLocked), or nil. m.mu is held.
func (m *Manager) retiredLocked(cfg ServerConfig) chan struct{} {
	var wait []chan struct{}
	for _, prev := range []chan struct{}{m.retiring[cfg.Name], m.retiringID[cfg.ID]} {
		if prev == nil || (len(wait) == 1 && wait[0] == prev) {
			continue
		}
		select {
		case <-prev:
		default:
			wait = append(wait, prev)
		}
	}
	switch len(wait) {
	case 0:
		return nil
	case 1:
		return wait[0]
	}
	return bothDone(wait[0], wait[1])
}

// bothDone is closed once a and b (if not nil) are.
func bothDone(a, b chan struct{}) chan struct{} {
	if b == nil {
		return a
	}
	c := make(chan struct{})
	go func() {
		<-a
		<-b
		close(c)
	}()
	return c
}

func (m *Manager) apply(ctx context.Context, cfgs []ServerConfig) {
	m.applyWith(ctx, cfgs, false)
}

// applyWith is apply; again true applies the configuration last applied
// instead of cfgs, read under the same lock as the reconcile, so that it
// never undoes an Apply that came meanwhile. It does nothing when again
// is true and no changed configuration was refused (RetryRefused).
// It returns the replacements it started.
func (m *Manager) applyWith(ctx context.Context, cfgs []ServerConfig, again bool) []replaceJob {
	m.mu.Lock()
	if m.closed || (again && len(m.refused) == 0) {
		m.mu.Unlock()
		return nil
	}
	if again {
		cfgs = m.last
	}
	m.last = cfgs
	want := map[string]ServerConfig{}
	var dups []string // logged once the lock is released
	for _, c := range cfgs {
		if _, dup := want[c.Name]; dup {
			if !again {
				dups = append(dups, c.Name)
			}
			continue
		}
		want[c.Name] = c
	}
	plan := m.reconcileLocked(want)
	m.mu.Unlock()
	for _, name := range dups {
		m.opts.Logger.Warn("upstream: a server name is configured twice; the first one is used", "server", name)
	}

	for _, name := range plan.removed {
		m.reg.Remove(name)
	}
	for _, s := range plan.stopping {
		go s.shutdown(context.WithoutCancel(ctx))
	}
	for _, p := range plan.added {
		m.reg.Add(p)
	}
	for _, s := range plan.started {
		go s.run(nil, nil)
	}
	for _, j := range plan.replacing {
		go m.replace(ctx, j.cfg, j.r)
	}
	m.toolsChanged()
	m.mu.Lock()
	all := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		all = append(all, s)
	}
	m.mu.Unlock()
	for _, s := range all {
		m.report(s)
	}
	return plan.replacing
}

// reconcileLocked updates m's maps to want and returns what to do about
// it. m.mu is held.
func (m *Manager) reconcileLocked(want map[string]ServerConfig) applyPlan {
	m.configGen.Add(1)
	// Decided anew below: a configuration refused before is replaced
	// again (and refused again, if it still cannot start).
	clear(m.refused)
	var pl applyPlan
	for name, s := range m.servers {
		if _, ok := want[name]; !ok {
			pl.stopping = append(pl.stopping, s)
			m.retireLocked(s.cfg, bothDone(s.done, m.cancelReplaceLocked(name)))
			delete(m.servers, name)
			delete(m.pending, name)
			if _, ok := m.providers[name]; ok {
				delete(m.providers, name)
				pl.removed = append(pl.removed, name)
			}
		}
	}
	for name, cfg := range want {
		old, ok := m.servers[name]
		if ok && old.cfg.equal(cfg) {
			delete(m.pending, name)
			m.cancelReplaceLocked(name)
			old.setIdentity(cfg.Identity) // not part of the connection
			continue
		}
		if p, ok := m.pending[name]; ok && p.equal(cfg) {
			m.pending[name] = cfg // the newest identity setting
			stopForwarding(old, cfg)
			continue // this replacement is already being connected
		}
		runnable := cfg.Enabled && cfg.Validate() == nil
		if ok && runnable && old.cfg.Enabled && old.status().State == StateConnected {
			// Connect the new one first; swap only if it initializes.
			m.pending[name] = cfg
			m.cancelReplaceLocked(name)
			ctx, cancel := context.WithCancel(context.Background())
			r := &replacement{ctx: ctx, cancel: cancel, done: make(chan struct{}), prev: m.replacements[name]}
			m.replacements[name] = r
			pl.replacing = append(pl.replacing, replaceJob{cfg, r})
			stopForwarding(old, cfg)
			continue
		}
		delete(m.pending, name)
		if ok {
			pl.stopping = append(pl.stopping, old)
			m.retireLocked(old.cfg, bothDone(old.done, m.cancelReplaceLocked(name)))
		}
		s := m.newServerLocked(cfg)
		m.servers[name] = s
		p, had := m.providers[name]
		switch {
		case runnable && had:
			p.setServer(s)
			pl.started = append(pl.started, s)
		case runnable:
			p = &provider{name: name, srv: s}
			m.providers[name] = p
			pl.added = append(pl.added, p)
			pl.started = append(pl.started, s)
		case had:
			delete(m.providers, name)
			pl.removed = append(pl.removed, name)
		}
	}
	return pl
}

// stopForwarding applies cfg's identity setting to the server old still
// serving while cfg's replacement connects (or after it failed to), when
// that setting forwards nothing: turning forwarding off takes effect on the
// next call, as documented, even with the connection changed at the same
// time. A setting that forwards is left for the replacement: the old
// connection (maybe another URL or command) is not what the user chose to
// send the caller's identity to.
func stopForwarding(old *server, cfg ServerConfig) {
	if m := cfg.Identity.Mode; old != nil && (m == identity.ModeOff || m == "") {
		old.setIdentity(cfg.Identity)
	}
}

// newServerLocked builds the server for cfg; a disabled or invalid one
// gets no supervisor (its done channel is closed at once). m.mu is held.
func (m *Manager) newServerLocked(cfg ServerConfig) *server {
	var ring = (*server)(nil)
	if old, ok := m.servers[cfg.Name]; ok {
		ring = old
	}
	s := newServer(m, cfg, nil)
	s.after = m.retiredLocked(cfg)
	if ring != nil && ring.cfg.Transport == TransportStdio && cfg.Transport == TransportStdio {
		s.ring = ring.ring // keep the log across a restart
	}
	s.resolveOrigin()
	if err := cfg.Validate(); err != nil {
		s.state, s.lastErr = StateUnavailable, err.Error()
		s.endIdle()
	} else if !cfg.Enabled {
		s.state = StateDisabled
		s.endIdle()
	}
	return s
}

// endIdle closes the done of a server that runs no supervisor, once the
// stopped server before it (after) is done: a successor waits for both.
func (s *server) endIdle() {
	if s.after == nil {
		close(s.done)
		return
	}
	go func() {
		<-s.after
		close(s.done)
	}()
}

// replace connects cfg beside the running server and swaps it in if it
// initializes and lists its tools; if not, the old one keeps serving and
// its status says why the new configuration was not applied.
func (m *Manager) replace(ctx context.Context, cfg ServerConfig, r *replacement) {
	r.err = errSuperseded
	defer func() {
		r.cancel()
		m.mu.Lock()
		if m.replacements[cfg.Name] == r {
			delete(m.replacements, cfg.Name)
		}
		m.mu.Unlock()
		close(r.done)
	}()
	if r.prev != nil {
		<-r.prev.done // superseded: its process has ended
		r.prev = nil  // a run of quick edits must not keep a chain of finished ones alive
	}
	m.mu.Lock()
	old := m.servers[cfg.Name]
	if r.ctx.Err() != nil || old == nil {
		m.mu.Unlock()
		return // superseded before it started
	}
	ring := old.ring
	m.mu.Unlock()
	s := newServer(m, cfg, ring)
	s.resolveOrigin()
	sess, ts, err := s.attempt(r.ctx)
	m.mu.Lock()
	latest, ok := m.pending[cfg.Name]
	if !ok || !latest.equal(cfg) || m.closed || m.servers[cfg.Name] != old {
		m.mu.Unlock() // superseded meanwhile
		if sess != nil {
			sess.close()
		}
		return
	}
	delete(m.pending, cfg.Name)
	m.configGen.Add(1)
	if err != nil {
		m.refused[cfg.Name] = err
		r.err = s.refreshErr(err)
		m.mu.Unlock()
		if kind := refusalOf(err); kind != "" {
			m.event(Event{Server: cfg.Name, Transport: cfg.Transport, Kind: kind, Detail: s.maskLine(err.Error())})
		}
		old.noteErr(fmt.Errorf("the new configuration was not applied (still serving the previous one): %w", err))
		return
	}
	s.setIdentity(latest.Identity)
	m.servers[cfg.Name] = s
	p := m.providers[cfg.Name]
	m.mu.Unlock()
	s.mu.Lock()
	s.tools, s.hidden = ts, false
	s.mu.Unlock()
	p.setServer(s)
	r.err = nil
	go s.run(sess, ts)
	old.shutdown(context.WithoutCancel(ctx))
}

func (s *server) resolveOrigin() {
	switch s.cfg.Transport {
	case TransportStdio:
		// Paths only: this runs at every apply (under m.mu for a new
		// server), and the hashes are the spawn's and the chain's to
		// compute.
		if l, err := launchPaths(s.cfg, nil); err == nil {
			// The chain re-checks the executable and the script on every
			// call; a package npx runs is checked at spawn only.
			s.originV = tools.LocalOrigin(l.Exec)
			s.originV.Script = l.Script
		} else if path, err := resolveCommand(s.cfg.Command, s.cfg.Cwd); err == nil {
			s.originV = tools.LocalOrigin(path)
		} else {
			s.originV = tools.LocalOrigin("")
		}
	case TransportHTTP, TransportSSE:
		s.originV = tools.RemoteOrigin(s.cfg.URL)
	}
}

func (s *server) origin() tools.Origin { return s.originV }

// toolsChanged recomputes every exposed name (all servers at once, see
// names.go) and hands each provider its list; providers whose list changed
// signal the registry.
func (m *Manager) toolsChanged() {
	m.renameMu.Lock()
	defer m.renameMu.Unlock()
	m.mu.Lock()
	provs := make(map[string]*provider, len(m.providers))
	for k, v := range m.providers {
		provs[k] = v
	}
	m.mu.Unlock()
	var builtin []string
	for _, p := range m.reg.Providers() {
		if _, ours := p.(*provider); ours {
			continue
		}
		for _, t := range p.Tools() {
			if t != nil {
				builtin = append(builtin, t.Spec().Name)
			}
		}
	}
	offered := map[string][]upstreamTool{}
	approval := map[string]map[string]Approval{}
	var keys []toolKey
	hidden := map[string]bool{}
	for name, p := range provs {
		ts, h := p.server().offeredTools()
		offered[name], hidden[name] = ts, h
		for _, t := range ts {
			keys = append(keys, toolKey{name, t.Name})
		}
	}
	names := assignNames(builtin, keys, m.opts.NameLimit)
	for name, p := range provs {
		if !hidden[name] {
			approval[name] = m.approvals(name, offered[name], names)
			p.server().setApprovals(approval[name])
		}
	}
	byServer := make(map[string]map[string]exposedName, len(provs))
	for k, v := range names {
		if byServer[k.server] == nil {
			byServer[k.server] = map[string]exposedName{}
		}
		byServer[k.server][k.tool] = v
	}
	m.namesMu.Lock()
	m.names = byServer
	m.namesMu.Unlock()
	for name, p := range provs {
		list := make([]tools.Tool, 0, len(offered[name]))
		for _, t := range offered[name] {
			n := names[toolKey{name, t.Name}]
			list = append(list, &upTool{p: p, original: t.Name, approval: approval[name][t.Name], sha256: t.Def.SHA256,
				spec: tools.Spec{
					Name: n.name, Title: t.Title, Description: t.Description,
					Permission: tools.PermUpstream, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
					Server: name, Plain: name + "__" + t.Name, Hashed: hashedName(toolKey{name, t.Name}, m.opts.NameLimit),
				}})
		}
		p.setList(list)
	}
}

// namesOf returns server's exposed names by original tool name (nil when
// it has none): a lookup, not a walk over every server's tools, since each
// status of each server asks. The map is shared: read it, never modify it.
func (m *Manager) namesOf(server string) map[string]exposedName {
	m.namesMu.RLock()
	defer m.namesMu.RUnlock()
	return m.names[server]
}

// report hands s's status to Options.OnStatus, outside every lock.
func (m *Manager) report(s *server) {
	if m.opts.OnStatus == nil {
		return
	}
	m.reportMu.Lock()
	defer m.reportMu.Unlock()
	m.opts.OnStatus(s.status())
}

func (m *Manager) test(ctx context.Context, cfg ServerConfig) (TestResult, error) {
	if err := cfg.Validate(); err != nil {
		return TestResult{}, err
	}
	s := newServer(m, cfg, nil)
	begin := time.Now()
	sess, err := m.dial(ctx, cfg, s.ring, sessionHooks{})
	if err != nil {
		if log := strings.TrimSpace(string(s.logs())); log != "" {
			err = fmt.Errorf("%w\nits stderr:\n%s", err, log)
		}
		return TestResult{}, errors.New(s.maskLine(err.Error()))
	}
	defer sess.close()
	res := TestResult{Latency: time.Since(begin)}
	if ir := sess.cs.InitializeResult(); ir != nil {
		res.ProtocolVersion = ir.ProtocolVersion
		if ir.ServerInfo != nil {
			res.ServerName, res.ServerVersion = displayName(ir.ServerInfo.Name), displayName(ir.ServerInfo.Version)
		}
	}
	begin = time.Now()
	ts, err := listTools(ctx, sess, cfg.readTimeout(), m.opts.MaxPages, m.opts.MaxTools, m.opts.MaxListBytes)
	res.ListLatency = time.Since(begin)
	if err != nil {
		return res, errors.New(s.maskLine(err.Error()))
	}
	var keys []toolKey
	for _, t := range ts {
		keys = append(keys, toolKey{cfg.Name, t.Name})
	}
	names := assignNames(nil, keys, m.opts.NameLimit)
	for _, t := range ts {
		n := names[toolKey{cfg.Name, t.Name}]
		res.Tools = append(res.Tools, ToolInfo{Exposed: n.name, Note: n.note, Original: displayName(t.Name),
			Description: t.Description, InputSchema: t.InputSchema, LastSeen: t.LastSeen, SHA256: t.Def.SHA256})
	}
	return res, nil
}

func (m *Manager) close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	for _, r := range m.replacements {
		r.cancel() // its process is not to be swapped in
	}
	var all []*server
	for _, s := range m.servers {
		all = append(all, s)
	}
	names := make([]string, 0, len(m.providers))
	for n := range m.providers {
		names = append(names, n)
	}
	m.providers = map[string]*provider{}
	m.mu.Unlock()
	for _, n := range names {
		m.reg.Remove(n)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(all))
	for i, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.shutdown(ctx); err != nil {
				errs[i] = fmt.Errorf("upstream %s: %w", s.cfg.Name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// RetryRefused tries again every changed configuration that could not be
// applied (its replacement failed, the old one still serves), as Apply
// would with the configuration last applied: after an allowlist, pin or
// egress change, the one that was refused may be approved now, and
// nothing else would try it before the next edit. Without such a
// configuration it does nothing. It returns at once; the replacements
// connect in the background.
func (m *Manager) RetryRefused(ctx context.Context) {
	m.applyWith(ctx, nil, true)
}

// retryRefusedOne is Refresh for a server whose changed configuration
// was refused: it applies the configuration again, waits for the
// replacement that starts and returns how it ended (nil: swapped in).
// done is false when none started (the old server is not connected, so
// the new one was started in its place; the caller refreshes that one as
// usual).
func (m *Manager) retryRefusedOne(ctx context.Context, name string) (done bool, err error) {
	var r *replacement // the one started, which may have ended already
	for _, j := range m.applyWith(ctx, nil, true) {
		if j.cfg.Name == name {
			r = j.r
		}
	}
	if r == nil {
		// Another Refresh (of every server, in parallel) may have started
		// it: its outcome is this one's too.
		m.mu.Lock()
		if c := m.replacements[name]; c != nil && c.ctx.Err() == nil { // not one abandoned
			r = c
		}
		m.mu.Unlock()
	}
	if r == nil {
		return false, nil
	}
	select {
	case <-r.done:
		return true, r.err
	case <-ctx.Done():
		return true, ctx.Err()
	}
}
