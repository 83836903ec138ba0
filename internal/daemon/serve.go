package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/support/token"
	"github.com/clawde/clawd/internal/transport"
)

// HealthMethod is the JSON-RPC method that returns the health object on
// every transport (GET /health is the HTTP form).
const HealthMethod = "clawd/health"

// lastEvaler is implemented by a chain that reports the latency of its most
// recent policy evaluation. Asserting it at run time keeps this file
// independent of when the chain gains the method.
type lastEvaler interface{ LastEval() time.Duration }

// selfPID is read once: os.Getpid is a system call, and /health reports
// it on every request.
var selfPID = os.Getpid()

// Health returns the health object GET /health and clawd/health answer
// (docs/transports.md).
func (d *Daemon) Health() transport.Health {
	// The chain's own notion of an active tool ([tools] switch, supply
	// chain), so /health counts what tools/list can show.
	active := d.Chain.ActiveCount(d.Server.Registry)
	h := transport.Health{
		Status:           "ok",
		PID:              selfPID,
		UptimeS:          int64(time.Since(d.Started) / time.Second),
		MCPVersion:       mcp.NewestVersion(),
		ActiveTools:      active,
		LastPolicyEvalMS: -1,
	}
	if le, ok := d.Server.Chain.(lastEvaler); ok {
		h.LastPolicyEvalMS = le.LastEval().Milliseconds()
	}
	return h
}

// RegisterHealth adds the clawd/health method to the MCP server.
func (d *Daemon) RegisterHealth() {
	if d.Server.Extensions == nil {
		d.Server.Extensions = map[string]mcp.MethodHandler{}
	}
	d.Server.Extensions[HealthMethod] = func(context.Context, *mcp.Session, jsontext.Value) (any, *jsonrpc.Error) {
		return d.Health(), nil
	}
}

// SocketPath is the unix socket to serve: override (--socket), else the
// config's socket_path, else the default for the workspace.
func (d *Daemon) SocketPath(override string) string {
	return runstate.SocketPath(d.Config(), d.Paths, d.WorkspaceID, override)
}

// TokenPath is the workspace token file (config token_path or the default).
func (d *Daemon) TokenPath() string { return runstate.TokenPath(d.Config(), d.Paths, d.WorkspaceID) }

// ServeUnix serves the unix socket transport until ctx ends.
func (d *Daemon) ServeUnix(ctx context.Context, socketOverride string, stderr io.Writer) error {
	d.RegisterHealth()
	d.registerAPIMethod() // the REST API for `clawd mcp refresh` and `mcp logs` (restapi.go)
	path := d.SocketPath(socketOverride)
	if socketOverride != "" {
		d.protectSocket(path)
	}
	if filepath.Dir(path) == d.Paths.RuntimeDir {
		if err := d.Paths.EnsureRuntimeDir(); err != nil {
			return err
		}
	}
	ln, err := transport.ListenUnix(path)
	if err != nil {
		if errors.Is(err, transport.ErrAlreadyRunning) {
			return fmt.Errorf("clawd is already running for this workspace on %s; use it (clawd connect), or stop it first", path)
		}
		return err
	}
	defer ln.Close()
	statePath := runstate.Path(d.Paths.DataDir, d.WorkspaceID, runstate.Unix)
	if err := runstate.Write(statePath, d.state(runstate.Unix, "", path, "")); err != nil {
		return fmt.Errorf("writing the state file %s: %w", statePath, err)
	}
	defer runstate.RemoveIfOwn(statePath, os.Getpid())
	fmt.Fprintf(stderr, "clawd: serving MCP on unix socket %s (workspace %s); this user's peers are entity %s:%s, or their credential's kind\n",
		path, d.WS.Dir, d.Config().DefaultClientKind, d.WorkspaceID)
	d.Logger.Info("serving on a unix socket", "socket", path, "workspace", d.WS.Dir)
	srv := &transport.UnixServer{Server: d.Server, Subject: d.WorkspaceID, Logger: d.Logger,
		Kind: d.Config().DefaultClientKind, Auth: d.credentials(nil), Audit: d.Chain.Audit,
		LiveKind: func() string { return d.Config().DefaultClientKind }}
	return srv.Serve(ctx, ln)
}

// TCPOptions are the inputs of ServeTCP beyond the config.
type TCPOptions struct {
	Port int // -1: the config's port; 0: any free port
	// EnvSecret is CLAWDE_SESSION_SECRET, already taken out of the
	// environment (token.TakeEnvSecret); nil means "use the secret file".
	EnvSecret []byte
	Stderr    io.Writer
}

// ServeTCP serves MCP Streamable HTTP and /health on loopback until ctx
// ends, with a workspace token that SIGUSR1 (`clawd token rotate`) rotates.
func (d *Daemon) ServeTCP(ctx context.Context, o TCPOptions) error {
	d.RegisterHealth()
	cfg := d.Config()
	port := o.Port
	if port < 0 {
		port = cfg.Port
	}
	statePath := runstate.Path(d.Paths.DataDir, d.WorkspaceID, runstate.TCP)
	// One loopback daemon per workspace: the lock, held while serving,
	// decides between two starting at once, which the state file cannot
	// (each checks it before the other has written it). The check of the
	// state file stays for a daemon of a clawd that took no lock.
	lock, err := runstate.Lock(runstate.LockPath(d.Paths.DataDir, d.WorkspaceID, runstate.TCP))
	if errors.Is(err, runstate.ErrLocked) {
		if st, err := runstate.Read(statePath); err == nil && st.Addr != "" {
			return fmt.Errorf("clawd is already running for this workspace on http://%s (pid %d); use it, or stop it first", st.Addr, st.PID)
		}
		return fmt.Errorf("clawd is already running for this workspace (%v); use it, or stop it first", err)
	}
	if err != nil {
		return err
	}
	defer lock.Close()
	if st, err := runstate.Read(statePath); err == nil && st.PID != os.Getpid() && runstate.Alive(st.PID) {
		if pid, err := runstate.ProbeHealth(st.Addr); err == nil && pid == st.PID {
			return fmt.Errorf("clawd is already running for this workspace on http://%s (pid %d); use it, or stop it first", st.Addr, st.PID)
		}
	}
	ln, err := transport.ListenTCP(cfg.BindAddr, port)
	if err != nil {
		if errors.Is(err, transport.ErrAddrInUse) {
			addr := net.JoinHostPort(bindHost(cfg.BindAddr), strconv.Itoa(port))
			if pid, err := runstate.ProbeHealth(addr); err == nil {
				return fmt.Errorf("clawd (pid %d) is already running on http://%s; stop it, or pick another port with --port (0 picks a free one)", pid, addr)
			}
		}
		return err
	}
	defer ln.Close()
	addr := ln.Addr().String()

	secret := o.EnvSecret
	if secret != nil {
		if err := token.CheckEnvSecret(secret); err != nil {
			return err
		}
	} else if secret, err = token.LoadOrCreateSecret(d.Paths.SecretFile); err != nil {
		return err
	}
	iss, err := token.NewIssuer(token.Options{
		Secret:      secret,
		WorkspaceID: d.WorkspaceID,
		PID:         os.Getpid(),
		Boot:        d.Started,
		Path:        d.TokenPath(),
		Logger:      d.Logger,
	})
	if err != nil {
		return err
	}
	defer iss.Remove()
	go iss.Run(ctx)
	stopRotate := notifyRotate(ctx, func() {
		if err := iss.Rotate(); err != nil {
			d.Logger.Error("token rotation failed; the old token stays valid", "err", err)
		}
	})
	defer stopRotate()

	if err := runstate.Write(statePath, d.state(runstate.TCP, addr, "", iss.Path())); err != nil {
		return fmt.Errorf("writing the state file %s: %w", statePath, err)
	}
	defer runstate.RemoveIfOwn(statePath, os.Getpid())
	fmt.Fprintf(o.Stderr, "clawd: serving MCP on http://%s%s (workspace %s); the token file's holders are entity %s:%s, credentials name their own kind\nclawd: health: http://%s%s; token file: %s\n",
		addr, transport.PathMCP, d.WS.Dir, d.Config().DefaultClientKind, d.WorkspaceID, addr, transport.PathHealth, iss.Path())
	d.Logger.Info("serving on loopback HTTP", "addr", addr, "workspace", d.WS.Dir, "token_file", iss.Path())
	srv := &transport.HTTPServer{
		Server:       d.Server,
		Auth:         d.credentials(iss),
		Subject:      d.WorkspaceID,
		Health:       d.Health,
		Logger:       d.Logger,
		MaxBodyBytes: int64(cfg.MaxMessageBytes),
		API:          d.restAPI(),
		Audit:        d.Chain.Audit,
	}
	return srv.Serve(ctx, ln)
}

func (d *Daemon) state(tr, addr, socket, tokenFile string) *runstate.State {
	return &runstate.State{
		PID:         os.Getpid(),
		Transport:   tr,
		Addr:        addr,
		Socket:      socket,
		TokenFile:   tokenFile,
		Workspace:   d.WS.Dir,
		WorkspaceID: d.WorkspaceID,
		Started:     d.Started.Round(0),
		Version:     Version,
	}
}

func bindHost(b string) string {
	if b == "" || b == "localhost" {
		return "127.0.0.1"
	}
	if len(b) >= 2 && b[0] == '[' {
		return b[1 : len(b)-1]
	}
	return b
}
