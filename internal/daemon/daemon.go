// Package daemon assembles a running clawd from its parts: config, paths,
// workspace, tools, chain and MCP server. Transports then serve it. It is the
// only package that knows all the others; cmd/clawd only parses flags.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/upstream"
)

// Version is clawd's semantic version (serverInfo.version).
const Version = "0.1.0"

// Options are what `clawd serve` passes in.
type Options struct {
	Workspace  string // directory; "" = current directory
	ConfigFile string // "" = the XDG default
	ClientKind string // entity kind for stdio callers (--client); "" = default_client_kind
	Logger     *slog.Logger
}

// Daemon is an assembled server.
type Daemon struct {
	Paths       config.Paths
	ConfigFile  string
	WS          *sandbox.Workspace
	WorkspaceID string
	Server      *mcp.Server
	Chain       *chain.Chain
	Store       *store.DB // trust registry, allowlists, audit log (store.go)
	Started     time.Time
	Logger      *slog.Logger

	live atomic.Pointer[liveConfig]
	// upstreams connects the servers of `clawd mcp add` (StartUpstreams);
	// nil until then. Atomic: the chain reads it (upstreamSecrets) from
	// any goroutine, also while StartUpstreams sets it.
	upstreams atomic.Pointer[upstream.Manager]
	// upstreamToken marks the processes of its stdio servers
	// (upstream.OwnerEnv); "" when it could not be read.
	upstreamToken string
	// upstreamAudit writes the upstreams' events as audit rows.
	upstreamAudit *upstreamAuditor
	// groups records the bash calls' process groups; Close removes its
	// files.
	groups *upstream.GroupRecorder
	// egress is the egress allowlist as recheckEgress last saw it.
	egress egressState
	// retries are the servers retryUpstreams is retrying now.
	retries retryState
	// loadedFile is the config file as it was just before it was last
	// read (New, Reload): what the watcher compares against, so a write
	// between reading the file and the watcher's first look is not missed.
	// reloadMu serializes Reload and guards it.
	reloadMu   sync.Mutex
	loadedFile fileState
}

// liveConfig is the configuration in force together with the chain options
// derived from it once, so neither a call nor GET /health rebuilds them.
type liveConfig struct {
	cfg  *config.Config
	opts chain.Options
}

func (d *Daemon) setConfig(cfg *config.Config) *config.Config {
	old := d.live.Swap(&liveConfig{cfg: cfg,
		opts: chain.Options{PolicyStubMode: cfg.PolicyStubMode, DisabledTools: cfg.DisabledTools()}})
	if old == nil {
		return nil
	}
	return old.cfg
}

// New loads the config and opens the workspace. A config that fails
// validation is an error naming the key; the caller exits 1.
func New(opts Options) (*Daemon, error) {
	paths, err := config.DefaultPaths()
	if err != nil {
		return nil, err
	}
	cfgFile, required := opts.ConfigFile, true
	if cfgFile == "" {
		cfgFile, required = paths.ConfigFile, false
	}
	loaded := statConfig(cfgFile) // before reading: a write after it is seen by the watcher
	cfg, err := config.Load(cfgFile, required)
	if err != nil {
		return nil, err
	}
	dir := paths.ExpandHome(opts.Workspace) // "~/src/x" as in config paths
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	ws, err := sandbox.Open(dir)
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Daemon{
		Paths:       paths,
		ConfigFile:  cfgFile,
		loadedFile:  loaded,
		WS:          ws,
		WorkspaceID: config.WorkspaceID(ws.Dir),
		Started:     time.Now(),
		Logger:      logger,
	}
	d.setConfig(cfg)
	env := &builtin.Env{WS: ws, Limits: d.limits}
	d.Chain = &chain.Chain{WS: ws, Options: d.chainOptions, SupplyFreshFor: store.FreshFor, Secrets: d.upstreamSecrets}
	if err := d.openStore(); err != nil {
		ws.Close()
		return nil, err
	}
	// After the store: the data directory exists now.
	d.guardWorkspace()
	// Each bash call's process group is recorded while it runs, next to the
	// stdio servers' records: after a kill -9 of this daemon, the next
	// start's SweepRecorded ends what the calls left running.
	d.groups = upstream.NewGroupRecorder(d.procDir(), logger.With("component", "bash"))
	env.Groups = d.groups
	d.Server = &mcp.Server{
		Version:         Version,
		Registry:        tools.NewRegistry(builtin.Builtin(env)),
		Chain:           d.Chain,
		Logger:          logger,
		MaxConcurrency:  cfg.MaxConcurrency,
		MaxMessageBytes: cfg.MaxMessageBytes,
		Instructions:    mcp.Instructions(ws.Dir),
	}
	// [tools] may name only tools that exist; which do is known only now.
	if err := d.checkTools(cfgFile, cfg); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.Server.Registry.Start(context.Background()); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Config returns the current configuration.
func (d *Daemon) Config() *config.Config { return d.live.Load().cfg }

func (d *Daemon) limits() builtin.Limits { return builtin.LimitsFrom(d.Config()) }

// chainOptions are the chain's live options. The DisabledTools map is
// shared by every call until the next reload; the chain only reads it.
func (d *Daemon) chainOptions() chain.Options { return d.live.Load().opts }

// StdioCaller is the caller of a stdio session: the host that spawned clawd,
// as the kind its --client flag names ("" takes default_client_kind).
// Whoever can start clawd already is the user, so the flag is the credential.
func (d *Daemon) StdioCaller(kind string) *chain.Caller {
	if kind == "" {
		kind = d.Config().DefaultClientKind
	}
	return &chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: kind, Subject: d.WorkspaceID}
}

// checkTools refuses a config whose [tools] table names a tool no provider
// serves, with the config file's name like any other config error. A
// name SERVER__... of a configured upstream server passes whether or not
// the server is connected now (at start none is yet): a switch a reload
// accepted must not stop the next start.
func (d *Daemon) checkTools(file string, cfg *config.Config) error {
	known := d.Server.Registry.Names()
	if len(cfg.Tools) > 0 && d.Store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rows, err := d.Store.MCPServers(ctx) // one read, however many keys
		if err != nil {
			// Without the servers every SERVER__tool key would be refused
			// as unknown, naming the wrong cause.
			return fmt.Errorf("config %s: [tools]: reading the upstream servers to check SERVER__TOOL names: %w", file, err)
		}
		servers := make(map[string]bool, len(rows))
		for _, r := range rows {
			servers[r.Name] = !r.Builtin
		}
		for name := range cfg.Tools {
			if server, _, ok := strings.Cut(name, "__"); ok && servers[server] {
				known = append(known, name)
			}
		}
	}
	if err := cfg.CheckTools(known); err != nil {
		return fmt.Errorf("config %s: %w", file, err)
	}
	return nil
}

// Close stops the tool providers, folds the journaled audit rows and
// releases the database and the workspace.
func (d *Daemon) Close() error {
	stop := d.closeUpstreams()
	if d.Server != nil && d.Server.Registry != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		stop = errors.Join(stop, d.Server.Registry.Stop(ctx))
		cancel()
	}
	d.groups.Close()
	return errors.Join(stop, d.closeStore(), d.WS.Close())
}
