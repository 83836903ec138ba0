package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/support/peercred"
	"github.com/clawde/clawd/internal/transport"
)

func newConnectCmd() *cobra.Command {
	var f clientFlags
	var kind string
	cmd := &cobra.Command{
		Use:   "connect",
		Short: "Bridge stdio to the workspace's unix-socket daemon",
		Long: "Bridge stdin/stdout to the unix socket of the workspace's running daemon, byte for byte\n" +
			"(newline-delimited JSON-RPC), so a host that can only spawn stdio servers shares one daemon:\n\n" +
			"  .mcp.json: {\"mcpServers\":{\"clawd\":{\"command\":\"clawd\",\"args\":[\"connect\",\"--workspace\",\".\"]}}}\n\n" +
			"It ends when stdin closes (after the daemon answered what was sent) or when the daemon hangs up\n" +
			"(exit status 1). Start the daemon with 'clawd serve --transport unix_socket'.\n\n" +
			"Without --client the connection is entity default_client_kind:<workspace> (local): the socket\n" +
			"proves only that the peer runs as this user. --client KIND presents the credential saved by\n" +
			"'clawd token issue --client KIND' first, so the connection is entity KIND:<workspace>.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := runstate.ResolveWorkspace(f.options())
			if err != nil {
				return runtimeError("%v", err)
			}
			credential := ""
			if kind != "" {
				if !config.IsClientKind(kind) {
					return usageError("--client %q: use one of %s", kind, strings.Join(config.ClientKinds, ", "))
				}
				if credential, err = readCredentialFile(ws, kind); err != nil {
					return runtimeError("%v", err)
				}
			}
			t, err := runstate.Find(ws, f.options(), true)
			if err != nil {
				return runtimeError("%v", err)
			}
			return bridge(t.Unix, credential, os.Stdin, os.Stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&kind, "client", "", "present the saved per-client credential of this kind (cc, oc or local)")
	f.registerWorkspace(cmd)
	fl.StringVar(&f.socket, "socket", "", "unix socket of the daemon (default: from the config and the workspace)")
	f.port = -1
	return cmd
}

// bridge copies in to the socket and the socket to out. When in ends, the
// socket's write side is shut, so the daemon sees EOF, answers the calls in
// flight and closes; the copy to out then ends and bridge returns nil. If
// out loses its reader meanwhile (the host is gone), the socket is closed,
// and the daemon cancels those calls. It
// is an error when the daemon closes while input is still coming, or sends
// nothing at all in answer to input: it stopped, or refused this user (a
// refused peer is disconnected without a word).
func bridge(path, credential string, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	uc, err := peercred.Dial(ctx, path) // nothing, a credential least of all, goes to another user's socket
	cancel()
	if err != nil {
		return runtimeError("connecting to %s: %v", path, err)
	}
	defer uc.Close()
	from := io.Reader(uc)
	if credential != "" {
		br, err := presentCredential(uc, credential)
		if err != nil {
			return runtimeError("%v", err)
		}
		from = br
	}
	// Set before the write side is shut, so it is visible when the daemon's
	// resulting close ends the copy below.
	var inEnded atomic.Bool
	var nIn atomic.Int64
	var inFailed atomic.Bool // the daemon stopped reading
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		n, err := io.Copy(uc, in)
		nIn.Store(n)
		inFailed.Store(err != nil)
		inEnded.Store(true)
		uc.CloseWrite()
		// A host that closed stdin but still reads waits for its answers.
		// One that is gone (no reader left on stdout) reads none: closing
		// the socket tells the daemon, which cancels its running calls
		// instead of letting them run to their timeout.
		transport.WatchHangup(ctx, out, func() { uc.Close() })
	}()
	nOut, outErr := io.Copy(out, from)
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

// authenticateID is the JSON-RPC id of the bridge's own clawd/authenticate
// request; its answer is read here and never reaches the host.
const authenticateID = `"clawd-connect-authenticate"`

// presentCredential sends clawd/authenticate with the credential as the
// connection's first message and reads the answer. It returns the reader
// the rest of the daemon's output comes from (bytes read past the answer
// stay buffered there).
func presentCredential(c net.Conn, credential string) (*bufio.Reader, error) {
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "clawd-connect-authenticate",
		"method": mcp.MethodAuthenticate, "params": map[string]string{"credential": credential}})
	c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("presenting the credential: %v", err)
	}
	br := bufio.NewReader(c)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("presenting the credential: the daemon did not answer (%v)", err)
	}
	var resp struct {
		ID    jsontext.Value `json:"id"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &resp, json.RejectUnknownMembers(false)); err != nil || string(resp.ID) != authenticateID {
		return nil, fmt.Errorf("presenting the credential: unexpected answer %.200q", line)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("the daemon refused the credential: %s (clawd token list; clawd token issue --client KIND)", resp.Error.Message)
	}
	return br, nil
}
