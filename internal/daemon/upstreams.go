package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/proc"
	"github.com/clawde/clawd/internal/upstream"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// StartUpstreams connects the upstream MCP servers configured with `clawd
// mcp add` and keeps them in step with the table until ctx ends: a change
// made by any process (add, rm, enable, disable) is applied within about a
// second, without a restart. Each server's status and tools are written
// back to its row, which is what `clawd mcp list` and `mcp tools` show.
//
// Before anything starts, processes a previous daemon of this workspace
// left behind (it was killed without cleanup) are ended: every stdio
// upstream and what it starts carries this workspace's owner token in its
// environment (docs/upstreams.md). A stdio server's executable must be on
// the supply-chain allowlist before it is started at all, not only before
// its tools are called; until then the server is unavailable and its last
// error says which `clawd mcp allow` line approves it. It returns at once.
//
// A clawd that runs under another clawd's upstream (its environment
// carries upstream.OwnerEnv, which every process an upstream starts
// inherits) starts no upstreams of its own: clawd added as its own
// upstream, or two daemons listing each other, would otherwise start
// clawds without end.
func (d *Daemon) StartUpstreams(ctx context.Context) {
	if os.Getenv(upstream.OwnerEnv) != "" {
		d.Logger.Info("running as an upstream server of another clawd: its upstream servers are not started here, so a loop of clawds cannot start")
		go d.sweepRecorded() // its bash calls are recorded all the same
		return
	}
	token, err := d.upstreamOwnerToken()
	if err != nil {
		d.Logger.Warn("upstream servers: no owner token, so processes of a killed daemon cannot be found; continuing", "err", err)
	}
	d.upstreamToken = token
	procDir := d.procDir()
	d.upstreamAudit = newUpstreamAuditor(d.Chain.Audit, d.Logger.Warn)
	m := upstream.NewManager(d.Server.Registry, upstream.Options{
		Logger:       d.Logger.With("component", "upstream"),
		OnStatus:     d.recordUpstreamStatus,
		OwnerToken:   token,
		VerifyLaunch: VerifyUpstream(d.Store), // a refusal is audited as the manager's refuse event
		Hasher:       d.Chain.Hashes(),        // shared with the per-call check
		CheckTools:   d.checkUpstreamTools,
		Identity:     d.identityForwarder(),
		Audit:        d.auditUpstream,
		ProcFile:     upstream.ProcFileFor(procDir, os.Getpid(), ""),
		VerifyOrigin: VerifyEgress(d.Store),
		OnEvent:      d.upstreamAudit.add,
		NameLimit:    d.Config().UpstreamToolNameMax,
	})
	d.upstreams.Store(m)
	d.adoptOrphans(ctx, token)
	// Off the startup path: reading every process's environment takes
	// milliseconds a client waiting for initialize should not.
	go func() {
		d.sweepRecorded()
		if n, err := proc.SweepExecDirs(); err != nil {
			d.Logger.Debug("upstream servers: looking for link directories a killed daemon left failed", "err", err)
		} else if n > 0 {
			// Housekeeping, not news: a stdio session's stderr stays the one
			// line saying what it serves.
			d.Logger.Debug("upstream servers: removed link directories a previous daemon left", "count", n)
		}
		if token != "" {
			if pids, err := upstream.SweepOrphans(token); err != nil {
				d.Logger.Debug("upstream servers: looking for processes a killed daemon left behind failed", "err", err)
			} else if len(pids) > 0 {
				d.Logger.Info("upstream servers: ended processes a previous daemon left behind", "pids", pids)
			}
		}
		d.recheckEgress(ctx) // what the egress allowlist is now, to compare later changes with
		err := d.Store.WatchMCPServers(ctx, pollEvery, func(rows []store.MCPServer) {
			m.Apply(ctx, UpstreamConfigs(rows))
		})
		if err != nil && ctx.Err() == nil {
			d.Logger.Error("upstream servers: reading their configuration failed; changes are no longer applied", "err", err)
		}
	}()
}

// upstreamSecrets are the resolved env and header values of the upstream
// servers (Manager.SecretValues), which the audit log's argument summaries
// mask; nil before StartUpstreams.
func (d *Daemon) upstreamSecrets() []string {
	if m := d.upstreams.Load(); m != nil {
		return m.SecretValues()
	}
	return nil
}

// procDir holds the records of this workspace's daemons' running process
// groups (stdio servers, bash calls): upstream.ProcFileFor files.
func (d *Daemon) procDir() string {
	return filepath.Join(d.Paths.DataDir, "upstream-procs-"+d.WorkspaceID)
}

// sweepRecorded ends what daemons of this workspace that were killed
// recorded as running (upstream.SweepRecorded).
func (d *Daemon) sweepRecorded() {
	if pids, err := upstream.SweepRecorded(d.procDir()); err != nil {
		d.Logger.Debug("reading what a killed daemon recorded failed", "err", err)
	} else if len(pids) > 0 {
		d.Logger.Info("ended processes a previous daemon recorded as running (servers, bash calls)", "pids", pids)
	}
}

// UpstreamConfigs turns the table's rows into the manager's configuration;
// the built-in row (clawd's own tools) is not an upstream. `clawd mcp test`
// uses it too, so it tests exactly what the daemon would run.
func UpstreamConfigs(rows []store.MCPServer) []upstream.ServerConfig {
	out := make([]upstream.ServerConfig, 0, len(rows))
	for _, r := range rows {
		if r.Builtin {
			continue
		}
		out = append(out, upstream.ServerConfig{
			Name:           r.Name,
			ID:             r.ID,
			Transport:      upstream.Transport(r.Transport),
			Command:        r.Command,
			Args:           r.Args,
			Cwd:            r.Cwd,
			Env:            r.Env,
			URL:            r.URL,
			Headers:        r.Headers,
			ConnectTimeout: time.Duration(r.ConnectTimeoutSeconds) * time.Second,
			ReadTimeout:    time.Duration(r.ReadTimeoutSeconds) * time.Second,
			Enabled:        r.Enabled,
			Identity: identity.Config{Mode: identity.Mode(r.IdentityMode), Arg: r.IdentityArg,
				Audience: r.IdentityAudience},
		})
	}
	return out
}

// recordUpstreamStatus writes a server's status, and its tools when it is
// connected, to its row: both in one transaction, so `clawd mcp list`
// never shows a server connected with the tool count of the attempt
// before. It runs on the manager's status goroutine, one call at a time,
// newest last.
func (d *Daemon) recordUpstreamStatus(st upstream.Status) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	row, err := d.Store.MCPServerByName(ctx, st.Name)
	if err != nil {
		return // removed meanwhile
	}
	status := store.ServerStatus{Status: st.State, Error: st.LastError, ConnectedAt: st.LastConnected, ToolCount: -1}
	if st.State == upstream.StateConnected {
		list := make([]store.MCPTool, 0, len(st.Tools))
		for _, t := range st.Tools {
			list = append(list, store.MCPTool{Name: t.Exposed, Description: t.Description, InputSchema: []byte(t.InputSchema)})
		}
		err := d.Store.RecordServerConnected(ctx, row.ID, status, list, time.Now())
		if err == nil || !store.IsValidation(err) {
			d.warnStatus(st.Name, err)
			return
		}
		// The cache refuses the list. The server is connected all the
		// same (its tools are served), so the status says so; the cache
		// and tool_count must not keep the list of the attempt before,
		// which `clawd mcp list` would show as this one's: they are
		// emptied, and last_error says why and how many were listed.
		d.Logger.Warn("upstream servers: caching the tool list failed", "server", st.Name, "err", err)
		why := fmt.Sprintf("connected with %d tools, but the tools cache refused the list (%v), so 'clawd mcp tools' and the tool count show none of them", len(list), err)
		if status.Error != "" {
			why = status.Error + "; " + why
		}
		status.Error = why
		d.warnStatus(st.Name, d.Store.RecordServerConnected(ctx, row.ID, status, nil, time.Now()))
		return
	}
	d.warnStatus(st.Name, d.Store.RecordServerStatus(ctx, row.ID, status))
}

func (d *Daemon) warnStatus(server string, err error) {
	if err != nil {
		d.Logger.Warn("upstream servers: recording a status failed", "server", server, "err", err)
	}
}

// retryUpstreams asks servers that could not start to try again: the
// allowlist or the environment they lacked may be there now. The retries
// run on their own goroutines and it returns at once: a Refresh waits for
// the connection (up to the server's connect timeout), and its caller,
// WatchConfig's loop, must go on to the egress recheck, reloads and
// SIGHUP meanwhile. A server has at most one retry running and one more
// owed (retryState): changes that come faster than a retry takes do not
// pile up a goroutine and a reconnect each.
func (d *Daemon) retryUpstreams(ctx context.Context) {
	m := d.upstreams.Load()
	if m == nil {
		return
	}
	// A changed configuration that was refused while the previous one
	// kept serving (its executable not approved yet, say) is tried again.
	m.RetryRefused(ctx)
	for _, st := range m.Status() {
		if d.retries.start(st.Name, needsRetry(st)) {
			go d.retryLoop(ctx, m, st.Name)
		}
	}
}

func needsRetry(st upstream.Status) bool {
	return st.State == upstream.StateUnavailable || st.State == upstream.StateError
}

// retryLoop retries name, and again while a change came during the last
// retry (it checked the allowlist as it was before that change) and the
// server still could not start.
func (d *Daemon) retryLoop(ctx context.Context, m *upstream.Manager, name string) {
	for {
		if err := m.Refresh(ctx, name); err != nil {
			d.Logger.Debug("upstream servers: retry refused", "server", name, "err", err)
		}
		if !d.retries.again(name, func() bool {
			st, ok := m.StatusOf(name)
			return ok && needsRetry(st) && ctx.Err() == nil
		}) {
			return
		}
	}
}

// retryState is, per server being retried, whether another retry is owed
// (a change came while the retry ran).
type retryState struct {
	mu   sync.Mutex
	owed map[string]bool
}

// start reports whether the caller is to run name's retry. If one runs
// already, it is told to go once more instead, whatever name's state is
// now: a running retry shows the server as connecting, yet it may have
// checked the allowlist before this change, and again decides after it
// ends whether the owed retry is still needed. Otherwise a retry starts
// only if needed (the server could not start).
func (r *retryState) start(name string, needed bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, running := r.owed[name]; running {
		r.owed[name] = true
		return false
	}
	if !needed {
		return false
	}
	if r.owed == nil {
		r.owed = make(map[string]bool)
	}
	r.owed[name] = false
	return true
}

// again reports whether the retry of name is to run once more: one is owed
// and still needed. Otherwise name is no longer being retried. needed runs
// under the lock, so a start cannot slip in between it and the decision.
func (r *retryState) again(name string, needed func() bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owed[name] && needed() {
		r.owed[name] = false
		return true
	}
	delete(r.owed, name)
	return false
}

// upstreamOwnerToken is this workspace's random token that marks the
// processes of its stdio upstreams, kept in the data directory (0600) so a
// restarted daemon recognises what its killed predecessor left behind.
func (d *Daemon) upstreamOwnerToken() (string, error) {
	path := filepath.Join(d.Paths.DataDir, "upstream-owner-"+d.WorkspaceID)
	if b, err := os.ReadFile(path); err == nil {
		if t := strings.TrimSpace(string(b)); len(t) == 32 {
			return t, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	t := hex.EncodeToString(b[:])
	if err := fileutil.WriteAtomic(path, []byte(t+"\n"), 0o600); err != nil {
		return "", err
	}
	return t, nil
}

// auditUpstream writes an event of the upstream manager (a refusal, such
// as identity_refused) as a Deny row of step "upstream".
func (d *Daemon) auditUpstream(ev upstream.AuditEvent) {
	server, _, _ := strings.Cut(strings.TrimPrefix(ev.Tool, "mcp:"), "/")
	d.recordUpstreamEvent(chain.AuditRecord{Time: ev.Time, EntityID: ev.Entity, ToolID: ev.Tool, Server: server,
		Result: chain.ResultDeny, Reason: ev.Reason})
}

// identityForwarder signs this workspace's identity tokens with the key
// `clawd mcp identity-key` (or adding a signed-mode server) created in the
// data directory. The daemon never creates the key itself: a key that is
// gone is refused (identity_refused), not silently replaced by one the
// servers do not know.
func (d *Daemon) identityForwarder() *identity.Forwarder {
	return &identity.Forwarder{
		Issuer:  identity.Issuer(d.WorkspaceID),
		KeyPath: identity.KeyPath(d.Paths.DataDir, d.WorkspaceID),
	}
}

// adoptOrphans makes clawd the child subreaper of what its upstreams start
// (Linux): a daemon a server double-forked, or a grandchild whose parent
// was killed, becomes clawd's child instead of init's, is ended once its
// server has exited (upstream.EndAdopted) and is reaped; adopted children
// without an upstream's mark (a built-in tool's background process) are
// only reaped. Elsewhere orphans go to init as before.
func (d *Daemon) adoptOrphans(ctx context.Context, token string) {
	if err := proc.BecomeSubreaper(); err != nil {
		d.Logger.Debug("upstream servers: not adopting orphaned processes", "err", err)
		return
	}
	go proc.WatchAdopted(ctx, time.Second, func(pids []int) {
		if ended := upstream.EndAdopted(pids, token); len(ended) > 0 {
			d.Logger.Info("upstream servers: ended processes a stopped server left behind", "pids", ended)
		}
	})
}

// closeUpstreams stops every upstream server and its processes, then ends
// what they left to clawd (adopted orphans carrying their mark).
func (d *Daemon) closeUpstreams() error {
	m := d.upstreams.Load()
	if m == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := m.Close(ctx)
	if proc.IsSubreaper() {
		upstream.EndAdopted(proc.ReapAdopted(), d.upstreamToken)
		proc.ReapAdopted()
	}
	d.upstreamAudit.close() // the disconnect rows, before the store closes
	return err
}
