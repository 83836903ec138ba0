package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/support/token"
	"github.com/clawde/clawd/internal/transport"
)

type serveFlags struct {
	workspace  string
	transport  string
	port       int
	socket     string
	client     string
	configFile string
	logLevel   string
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the MCP server (stdio by default)",
		Long: "Run the MCP server on one workspace. With --transport stdio (the default) an MCP host spawns\n" +
			"clawd and speaks JSON-RPC on its stdin/stdout; logs go to stderr.\n\n" +
			"--transport unix_socket serves a daemon on $XDG_RUNTIME_DIR/clawd.<workspace>.sock (else in your own\n" +
			"0700 directory /tmp/clawd-<uid>/), mode 0600, for peers of the same user only; stdio-only hosts\n" +
			"reach it through 'clawd connect'.\n\n" +
			"--transport tcp_loopback serves MCP Streamable HTTP on http://127.0.0.1:7430/mcp (GET /health\n" +
			"needs no token); every other request needs 'Authorization: Bearer <token>' with the token from\n" +
			"~/.claude/hooks/.clawde-token-<workspace> (see 'clawd token show').",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return serve(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workspace, "workspace", "", "workspace directory (default: the current directory)")
	fl.StringVar(&f.transport, "transport", "", "stdio, unix_socket or tcp_loopback (default: the config's, else stdio)")
	portVar(fl, &f.port, "TCP port for tcp_loopback (0 = any free port)")
	fl.StringVar(&f.socket, "socket", "", "unix socket path for unix_socket")
	fl.StringVar(&f.client, "client", "", "entity kind of the stdio caller: cc, oc or local (default: the config's default_client_kind, local)")
	fl.StringVar(&f.configFile, "config", "", "config file (default: $XDG_CONFIG_HOME/clawde/mcp-server.toml)")
	fl.StringVar(&f.logLevel, "log-level", "info", "stderr log level: debug, info, warn or error")
	return cmd
}

func serve(cmd *cobra.Command, f *serveFlags) error {
	// First of all, before anything could start a process: get clawd's own
	// variables out of the kernel's copy of the environment (a re-exec;
	// /proc/<pid>/environ is readable by every bash call), then take the
	// token secret out of Go's copy so no tool's child inherits it.
	if err := daemon.HideEnvSecrets(); err != nil {
		return runtimeError("%v", err)
	}
	envSecret, _ := token.TakeEnvSecret()
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return usageError("--log-level %q: use debug, info, warn or error", f.logLevel)
	}
	if f.port > 65535 || f.port < -1 {
		return usageError("--port %d: use 0..65535 (0 picks a free port)", f.port)
	}
	if f.client != "" && !config.IsClientKind(f.client) {
		return usageError("--client %q: use one of %s", f.client, strings.Join(config.ClientKinds, ", "))
	}
	if err := checkTransportFlags(cmd, f); err != nil {
		return err
	}
	daemon.CloseOnExecInherited()
	tuneGC()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	d, err := daemon.New(daemon.Options{
		Workspace:  f.workspace,
		ConfigFile: f.configFile,
		ClientKind: f.client,
		Logger:     logger,
	})
	if err != nil {
		return startError(err)
	}
	defer d.Close()
	cfg := d.Config()
	tr := cfg.Transport
	if f.transport != "" {
		tr = f.transport
	}
	if err := config.CheckTransport(tr, runtime.GOOS); err != nil {
		return usageError("%v", err)
	}
	if err := flagsFitTransport(cmd, tr); err != nil {
		return err
	}
	// Writing to a closed stdout must be an error we handle, not SIGPIPE.
	// The signal is caught, not ignored: an ignored signal stays ignored
	// across exec, and every child (bash's commands, stdio servers) would
	// then spin on EPIPE where a pipeline expects to be ended by SIGPIPE
	// (`yes | head -1`). A caught one is reset to its default in the child.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	d.WatchConfig(ctx)    // SIGHUP / file change -> reload; registry edits -> tools/list_changed
	d.StartUpstreams(ctx) // the servers of `clawd mcp add`, kept in step with the table
	switch tr {
	case config.TransportStdio:
		d.RegisterHealth()
		// One line, so that a terminal does not look hung and a client's log
		// says who the session is.
		caller := d.StdioCaller(f.client)
		cmd.PrintErrf("clawd: serving MCP on stdio (workspace %s) as entity %s:%s; an MCP client speaks JSON-RPC on stdin, end with Ctrl-D\n",
			shellWord(d.WS.Dir), caller.Kind, caller.Subject)
		err = transport.ServeProcessStdio(ctx, d.Server, caller)
		if err != nil && !errors.Is(err, context.Canceled) {
			return runtimeError("stdio session ended: %v", err)
		}
		return nil
	case config.TransportUnixSocket:
		if err := d.ServeUnix(ctx, f.socket, os.Stderr); err != nil {
			return runtimeError("%v", err)
		}
		return nil
	case config.TransportTCPLoopback:
		if err := d.ServeTCP(ctx, daemon.TCPOptions{Port: f.port, EnvSecret: envSecret, Stderr: os.Stderr}); err != nil {
			return startError(err)
		}
		return nil
	default:
		return usageError("--transport %q: use stdio, unix_socket or tcp_loopback", tr)
	}
}

// startError turns a startup failure into exit 1. A non-loopback bind
// address gives one line that starts with bind_0000_rejected (the name
// README.md and docs/transports.md give for this refusal) and names the
// setting to change.
func startError(err error) error {
	var be *config.BindError
	if errors.As(err, &be) {
		const line = "[ERROR] MCP server: bind_0000_rejected — external binding is forbidden"
		where := "the config"
		if before, _, ok := strings.Cut(err.Error(), ": bind_0000_rejected"); ok && before != "" {
			where = before // "config /path/to/file.toml"
		}
		return &exitError{code: 1, msg: fmt.Sprintf("%s (bind_addr = %s in %s); use 127.0.0.1 or ::1", line, be.Addr, where)}
	}
	return runtimeError("%v", err)
}

// transportFlags are the serve flags that only one transport uses.
var transportFlags = []struct{ name, transport string }{
	{"port", config.TransportTCPLoopback},
	{"socket", config.TransportUnixSocket},
	{"client", config.TransportStdio},
}

// checkTransportFlags refuses, before anything starts, a flag that does not
// apply to an explicit --transport.
func checkTransportFlags(cmd *cobra.Command, f *serveFlags) error {
	if f.transport == "" {
		return nil
	}
	return flagsFitTransport(cmd, f.transport)
}

// flagsFitTransport refuses --port, --socket or --client when the transport
// chosen (by flag or config) does not use it: silently ignoring them made
// `serve --port 9000` with a stdio config look like a daemon on port 9000.
func flagsFitTransport(cmd *cobra.Command, tr string) error {
	for _, tf := range transportFlags {
		name, want := tf.name, tf.transport
		if cmd.Flags().Changed(name) && tr != want && isTransport(tr) {
			return usageError("--%s applies only to --transport %s, but the transport is %s; drop --%s or add --transport %s",
				name, want, tr, name, want)
		}
	}
	return nil
}

func isTransport(tr string) bool {
	return tr == config.TransportStdio || tr == config.TransportUnixSocket || tr == config.TransportTCPLoopback
}

// tuneGC lets the heap grow to 5x its live size between collections
// (GOGC=400) unless the user set GOGC. clawd's live heap is a few MB, so at
// the default every large result (read_file of 10 KB allocates ~35 KB a
// call) soon triggers a collection. docs/benchmarks.md ("Core") has what
// this gains over stdio.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
