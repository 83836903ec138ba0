package main

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/client"
)

func newConnectCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "connect",
		Short: "Bridge stdio to the workspace's unix-socket daemon",
		Long: "Bridge stdin/stdout to the unix socket of the workspace's running daemon, byte for byte\n" +
			"(newline-delimited JSON-RPC), so a host that can only spawn stdio servers shares one daemon:\n\n" +
			"  .mcp.json: {\"mcpServers\":{\"clawd\":{\"command\":\"clawd\",\"args\":[\"connect\",\"--workspace\",\".\"]}}}\n\n" +
			"It ends when stdin closes (after the daemon answered what was sent) or when the daemon hangs up\n" +
			"(exit status 1). Start the daemon with 'clawd serve --transport unix_socket'.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := client.ResolveWorkspace(f.options())
			if err != nil {
				return runtimeError("%v", err)
			}
			t, err := client.Find(ws, f.options(), true)
			if err != nil {
				return runtimeError("%v", err)
			}
			return bridge(t.Unix, os.Stdin, os.Stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.workspace, "workspace", "", "workspace directory (default: the current directory)")
	fl.StringVar(&f.configFile, "config", "", "config file (default: $XDG_CONFIG_HOME/clawde/mcp-server.toml)")
	fl.StringVar(&f.socket, "socket", "", "unix socket of the daemon (default: from the config and the workspace)")
	f.port = -1
	return cmd
}

// bridge copies in to the socket and the socket to out. When in ends, the
// socket's write side is shut, so the daemon sees EOF, answers the calls in
// flight and closes; the copy to out then ends and bridge returns nil. It
// is an error when the daemon closes while input is still coming, or sends
// nothing at all in answer to input: it stopped, or refused this user (a
// refused peer is disconnected without a word).
func bridge(path string, in io.Reader, out io.Writer) error {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return runtimeError("connecting to %s: %v", path, err)
	}
	uc := c.(*net.UnixConn)
	defer uc.Close()
	// Set before the write side is shut, so it is visible when the daemon's
	// resulting close ends the copy below.
	var inEnded atomic.Bool
	var nIn atomic.Int64
	var inFailed atomic.Bool // the daemon stopped reading
	go func() {
		n, err := io.Copy(uc, in)
		nIn.Store(n)
		inFailed.Store(err != nil)
		inEnded.Store(true)
		uc.CloseWrite()
	}()
	nOut, outErr := io.Copy(out, uc)
	closed := runtimeError("the daemon on %s closed the connection (it stopped, or refused this user)", path)
	if inEnded.Load() {
		if inFailed.Load() || (nIn.Load() > 0 && nOut == 0) {
			return closed
		}
		return nil
	}
	if outErr != nil && !errors.Is(outErr, net.ErrClosed) {
		return runtimeError("bridge to %s: %v", path, outErr)
	}
	return closed
}
