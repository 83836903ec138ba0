package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/support/netguard"
	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// Server states, as Status.State.
const (
	// StateConnecting: starting or connecting, no tools known yet.
	StateConnecting = "connecting"
	// StateConnected: initialized; its tools are listed and callable.
	StateConnected = "connected"
	// StateStale: the connection was lost and clawd is reconnecting; the
	// cached tools stay listed, and a call fails with a tool error saying
	// so until the server is back.
	StateStale = "stale"
	// StateUnavailable: the server cannot be started as configured (the
	// command is not found, a ${VAR} is not set): fix the configuration.
	StateUnavailable = "unavailable"
	// StateError: it failed Options.MaxFailures times in a row; clawd has
	// stopped retrying until Refresh or a new configuration. Its tools are
	// hidden.
	StateError = "error"
	// StateDisabled: configured but not enabled.
	StateDisabled = "disabled"
)

// Status is what clawd knows about one upstream server, for `clawd mcp
// list` and the store.
type Status struct {
	Name      string
	Transport Transport
	State     string
	// LastError is the most recent failure ("" if none); it may outlive a
	// recovery.
	LastError     string
	ToolCount     int
	LastConnected time.Time
	// PID is the stdio child's process id while one runs (0 otherwise).
	PID   int
	Tools []ToolInfo
}

// ToolInfo is one cached upstream tool.
type ToolInfo struct {
	// Exposed is the name clients see ({server}__{tool}, or a hashed form;
	// Note says why). Original is the upstream's own name, which clawd
	// sends on tools/call.
	Exposed, Original, Description string
	InputSchema                    jsontext.Value
	LastSeen                       time.Time
	// Note says why Exposed is not the plain {server}__{tool} (too long,
	// characters outside [A-Za-z0-9_-], a collision and with what), or why
	// the tool is not offered.
	Note string
	// SHA256 is the hash of the tool's pinned definition (ToolDefinition);
	// Approval says whether the user approved it. Only an approved tool is
	// offered.
	SHA256   string
	Approval Approval
}

// TestResult is what Test found.
type TestResult struct {
	// Latency is the time to start/connect and initialize; ListLatency the
	// time of the tools/list that followed.
	Latency, ListLatency time.Duration
	ServerName           string // what the upstream calls itself
	ServerVersion        string
	ProtocolVersion      string
	Tools                []ToolInfo
}

// Options configure a Manager. The zero value works.
type Options struct {
	Logger *slog.Logger
	// OnStatus is called after a server's status changed (the daemon
	// persists it). Calls are serialized and each carries the status as it
	// is when the call is made, so the last call is the newest state. It
	// runs in a goroutine of the manager and must not call back into it
	// (Status, Apply...) nor block for long.
	OnStatus func(Status)
	// CheckTools, if set, decides which of a server's tools may be
	// offered: it gets the definition of every tool the server lists
	// (canonical JSON and its SHA-256, see ToolDefinition) each time the
	// tools are looked at again (a new list, a reconnect, every Apply) and
	// returns each tool's approval state by name (a name left out is
	// ApprovalNew). Tools not ApprovalApproved are listed to no client and
	// refused when called (the chain's supply-chain step, see
	// chain.Unapproved) until approved. An error withholds all of the
	// server's tools. Nil approves every tool (Test, tests). It runs on the
	// manager's goroutines, one call at a time, and must not call back into
	// the manager.
	CheckTools func(server string, defs []ToolDefinition) (map[string]Approval, error)
	// VerifyOrigin, if set, is asked before every connection to an
	// http/sse server whether its URL's origin may be reached, and returns
	// the policy its dialer enforces (which addresses; netguard.Policy). An
	// error makes the server unavailable with that error, before anything
	// is sent. Without it every origin may be reached under the default
	// policy (public addresses; loopback only for a loopback host).
	VerifyOrigin func(server string, origin netguard.Origin) (netguard.Policy, error)
	// Resolver resolves the names of http/sse servers (nil: the system's);
	// tests use it to make a name resolve to a chosen address.
	Resolver *net.Resolver
	// OnEvent, if set, is told of spawns, connects, disconnects and
	// refusals (Event), for the audit log. It is called on the goroutine
	// where the event happened, in order per server, and must not block
	// for long nor call back into the manager.
	OnEvent func(Event)
	// VerifyLaunch, if set, is asked before every spawn of a stdio server
	// whether what it runs may run: the executable (hashed through the
	// descriptor that is then executed, so on Linux a file swapped after
	// the check does not run; elsewhere the path is executed after
	// checking it still names the opened file) and, for an interpreter or
	// npx, the script or package it runs (Launch). An error makes the
	// server unavailable with that error as its last error.
	VerifyLaunch func(server string, l Launch) error
	// Hasher hashes executables and interpreters' scripts before a spawn
	// (default: read the whole file every time).
	Hasher FileHasher
	// NameLimit is the longest exposed tool name (default 64, what Claude
	// Code, Cursor, VS Code and OpenAI-style APIs accept). Clients that add
	// their own prefix (Claude Code: mcp__<name>__) may need less.
	NameLimit int
	// LogBytes is the size of each stdio child's stderr ring (default 64 KiB).
	LogBytes int
	// MaxFailures is how many failures in a row put a server in StateError
	// (default 5). A connection that stayed up StableAfter (default 60 s)
	// resets the count.
	MaxFailures int
	StableAfter time.Duration
	// BackoffBase and BackoffMax bound the delay between reconnects
	// (defaults 500 ms and 30 s); each delay is doubled and jittered.
	BackoffBase, BackoffMax time.Duration
	// MaxPages, MaxTools and MaxListBytes cap one tools/list walk
	// (defaults 100, 2000 and 32 MiB of answers); a repeated cursor ends
	// it with an error.
	MaxPages, MaxTools, MaxListBytes int
	// MaxOutputBytes caps one call's result (default 4 MiB); a bigger
	// result is replaced by a marker the model can read.
	MaxOutputBytes int
	// StopGrace is each step of a stdio child's graceful stop (default 2 s).
	StopGrace time.Duration
	// OwnerToken, if set, is given to every stdio child in OwnerEnv (a
	// child is marked even without one, with "-");
	// processes they start inherit it. After clawd was killed without
	// cleanup, the next start calls SweepOrphans(token) to end whatever is
	// left. The daemon keeps one random token per workspace, so daemons of
	// other workspaces do not sweep each other's servers.
	OwnerToken string
	// LookupEnv resolves ${VAR} in Env and Headers (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Identity signs the caller's identity for servers in signed mode
	// (ServerConfig.Identity); nil forwards meta mode and refuses every
	// call of a signed-mode server.
	Identity *identity.Forwarder
	// Audit, if set, receives the events the manager puts on record itself
	// (identity_refused); the daemon writes them as audit rows. It is
	// called on the calling goroutine and should not block for long.
	Audit func(AuditEvent)
	// ProcFile, if set, is where the running stdio children are recorded
	// (pid, process group, start time, session; procs.go) for
	// SweepRecorded after a kill -9. The daemon uses ProcFileFor(dir, its
	// pid, ""); the file is removed when no child runs.
	ProcFile string
}

// AuditEvent is one upstream event for the audit log: the daemon turns it
// into a row with step "upstream" and result Deny (docs/upstreams.md).
type AuditEvent struct {
	Time time.Time
	// Entity is the caller the event concerns, or "clawd" for the
	// daemon's own action.
	Entity string
	// Tool is "mcp:<server>" or "mcp:<server>/<upstream tool name>".
	Tool string
	// Reason is "<event>: <detail>", masked.
	Reason string
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.NameLimit <= 0 {
		o.NameLimit = 64
	}
	if o.LogBytes <= 0 {
		o.LogBytes = 64 << 10
	}
	if o.MaxFailures <= 0 {
		o.MaxFailures = 5
	}
	if o.StableAfter <= 0 {
		o.StableAfter = 60 * time.Second
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 500 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 30 * time.Second
	}
	if o.MaxPages <= 0 {
		o.MaxPages = 100
	}
	if o.MaxTools <= 0 {
		o.MaxTools = 2000
	}
	if o.MaxListBytes <= 0 {
		o.MaxListBytes = 32 << 20
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = 4 << 20
	}
	if o.Identity == nil {
		o.Identity = &identity.Forwarder{} // meta works; signed is refused (no key)
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	return o
}

// Manager owns every upstream server: their connections, processes,
// providers in the registry and statuses. Its methods are safe for
// concurrent use.
type Manager struct {
	reg  *tools.Registry
	opts Options

	mu        sync.Mutex
	servers   map[string]*server
	providers map[string]*provider    // registered: enabled, valid servers
	pending   map[string]ServerConfig // replacements being connected
	// retiring holds, by name, the done channel of the last server of
	// that name that was stopped, until it is closed (retireLocked): its
	// successor starts no process before it is closed, so a quick disable
	// and enable (or remove and add) never runs two processes of one
	// server while the old one is being stopped.
	retiring map[string]chan struct{}
	// retiringID is retiring by row id (ServerConfig.ID), for a renamed
	// server.
	retiringID map[int64]chan struct{}
	// refused holds, by name, why the changed configuration of a server
	// that still serves its previous one could not be applied; last is
	// the configuration last applied (RetryRefused applies it again).
	refused map[string]error
	last    []ServerConfig
	// replacements are the replaces in flight, by name (apply.go).
	replacements map[string]*replacement
	closed       bool
	// configGen counts changes to the configurations in servers and
	// pending (reconcileLocked, a replacement's swap; written under mu);
	// secrets is SecretValues as of a generation, so a call neither
	// resolves every server's values again nor takes mu.
	configGen atomic.Uint64
	secrets   atomic.Pointer[secretList]

	renameMu sync.Mutex // serializes toolsChanged
	procMu   sync.Mutex // serializes persistProcs
	reportMu sync.Mutex // serializes OnStatus
	namesMu  sync.RWMutex
	// names is every server's exposed names by original tool name, as
	// toolsChanged last assigned them; replaced whole, never modified.
	names map[string]map[string]exposedName
}

// NewManager returns a manager adding its providers to reg (a nil reg
// gets a registry of its own, for tools that only test connections).
func NewManager(reg *tools.Registry, opts Options) *Manager {
	if reg == nil {
		reg = tools.NewRegistry()
	}
	return &Manager{reg: reg, opts: opts.withDefaults(), servers: map[string]*server{},
		providers: map[string]*provider{}, pending: map[string]ServerConfig{}, retiring: map[string]chan struct{}{}, retiringID: map[int64]chan struct{}{}, refused: map[string]error{},
		replacements: map[string]*replacement{}}
}

// OwnerEnv is the variable that marks the processes of clawd's stdio
// upstreams: its value is Options.OwnerToken, a dot and the pid of the
// clawd that started them (ownerMark), so a sweep can tell the processes
// of a dead daemon from those of a live one of the same workspace (two
// stdio sessions of one project each run their own upstreams).
const OwnerEnv = "MCP_UPSTREAM_OWNER"

// ownerMark is OwnerEnv's value for a daemon's children.
func ownerMark(token string, pid int) string { return token + "." + strconv.Itoa(pid) }

// orphaned reports whether a process marked with value belongs to token
// and was started by a clawd that no longer runs (alive says whether a
// pid exists). A process of this very clawd, or of another live one, is
// not an orphan; a malformed mark is left alone.
func orphaned(value, token string, self int, alive func(int) bool) bool {
	owner, _, ok := parseMark(value, token)
	if !ok || owner == self {
		return false
	}
	return !alive(owner)
}

// ErrUnknownServer is returned for a name Apply was never given.
var ErrUnknownServer = errors.New("no upstream server of that name is configured")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("the upstream manager is closed")

// Apply makes the running set match cfgs: servers not in cfgs are stopped
// and their tools removed; new ones are started; changed ones are replaced
// (the new configuration is connected first and swapped in only if it
// initializes; until then the old one keeps serving). Connecting happens
// in the background, in parallel: Apply returns without waiting for any
// server, and one that hangs blocks no other. An invalid configuration is
// not started; its Status is unavailable with the validation error.
func (m *Manager) Apply(ctx context.Context, cfgs []ServerConfig) {
	m.apply(ctx, cfgs)
}

// Status returns every configured server's status, sorted by name.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	list := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		list = append(list, s)
	}
	m.mu.Unlock()
	out := make([]Status, 0, len(list))
	for _, s := range list {
		out = append(out, s.status())
	}
	slices.SortFunc(out, func(a, b Status) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// secretList is SecretValues as of configuration generation gen.
type secretList struct {
	gen  uint64
	vals []string
}

// SecretValues are the values of every configured server's env and
// headers (and a replacement's being connected) that the audit log masks
// wherever a call's arguments quote them (docs/security.md): each value as
// resolved and, apart, the value of each variable it references (the token
// of `Bearer ${TOKEN}`), each once, longest first. Values under 8 bytes
// and absolute paths (`${HOME}/data`) are left out: they would mask common
// words and every path of the workspace.
//
// The list is computed once per configuration change and shared: callers
// must not modify it. clawd's environment, which references resolve in,
// does not change while it runs.
func (m *Manager) SecretValues() []string {
	if c := m.secrets.Load(); c != nil && c.gen == m.configGen.Load() {
		return c.vals
	}
	m.mu.Lock()
	gen := m.configGen.Load()
	cfgs := make([]ServerConfig, 0, len(m.servers)+len(m.pending))
	for _, s := range m.servers {
		cfgs = append(cfgs, s.cfg)
	}
	for _, cfg := range m.pending {
		cfgs = append(cfgs, cfg)
	}
	m.mu.Unlock()
	lookup := m.opts.LookupEnv
	var vals []string
	add := func(v string) {
		if len(v) >= 8 && !filepath.IsAbs(v) {
			vals = append(vals, v)
		}
	}
	for _, cfg := range cfgs {
		for _, kv := range []map[string]string{cfg.Env, cfg.Headers} {
			for _, raw := range kv {
				if v, err := secrets.ExpandRefs(raw, lookup); err == nil {
					add(v)
				}
				for _, name := range secrets.Refs(raw) {
					if v, ok := lookup(name); ok {
						add(v)
					}
				}
			}
		}
	}
	slices.SortFunc(vals, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	vals = slices.Clip(slices.Compact(vals))
	// Kept only if no change came in meanwhile: a later call computes the
	// newer list.
	if m.configGen.Load() == gen {
		m.secrets.Store(&secretList{gen: gen, vals: vals})
	}
	return vals
}

// StatusOf is the status of one server, ok false when the manager does not
// have it: one server's tools, not Status's every server and tool.
func (m *Manager) StatusOf(name string) (st Status, ok bool) {
	m.mu.Lock()
	s, ok := m.servers[name]
	m.mu.Unlock()
	if !ok {
		return Status{}, false
	}
	return s.status(), true
}

// Refresh drops name's connection and connects again (also out of the
// error state), waiting until it is connected or failed, at most until ctx
// ends. It returns the connect error, if any.
func (m *Manager) Refresh(ctx context.Context, name string) error {
	m.mu.Lock()
	s, ok := m.servers[name]
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if !ok {
		return fmt.Errorf("upstream %q: %w", name, ErrUnknownServer)
	}
	m.mu.Lock()
	_, refused := m.refused[name]
	if r := m.replacements[name]; r != nil && r.ctx.Err() == nil {
		refused = true // one connecting (an edit, or retried by a parallel Refresh)
	}
	m.mu.Unlock()
	if refused {
		// The stored configuration, not the one still serving, is what
		// a refresh is to connect.
		if done, err := m.retryRefusedOne(ctx, name); done {
			return err
		}
		m.mu.Lock()
		s, ok = m.servers[name]
		m.mu.Unlock()
		if !ok {
			return fmt.Errorf("upstream %q: %w", name, ErrUnknownServer)
		}
	}
	select {
	case <-s.done: // no supervisor: disabled or an invalid configuration
		st := s.status()
		if st.State == StateDisabled {
			return fmt.Errorf("upstream %q is disabled; enable it first", name)
		}
		return fmt.Errorf("upstream %q cannot start: %s", name, st.LastError)
	default:
	}
	return s.doRefresh(ctx)
}

// Test connects to cfg with a throwaway client (its own process for
// stdio), lists its tools and disconnects; nothing is registered. It is
// bounded by cfg's ConnectTimeout and ReadTimeout and by ctx.
func (m *Manager) Test(ctx context.Context, cfg ServerConfig) (TestResult, error) {
	return m.test(ctx, cfg)
}

// Logs returns the recent stderr of name's stdio child (the current one or
// the last one), at most Options.LogBytes, with what looks like a secret
// masked (secrets.MaskText). Nil for an unknown or remote server.
func (m *Manager) Logs(name string) []byte {
	m.mu.Lock()
	s, ok := m.servers[name]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	return s.logs()
}

// Close stops every server (graceful stop of each stdio child, in
// parallel) and removes their providers; it waits until all are stopped or
// ctx ends. Later calls do nothing.
func (m *Manager) Close(ctx context.Context) error {
	return m.close(ctx)
}
