package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/support/token"
)

func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "The workspace token and per-client credentials",
		Long: "The tcp_loopback daemon accepts 'Authorization: Bearer <token>' with the workspace token, which\n" +
			"it writes to ~/.claude/hooks/.clawde-token-<workspace> (mode 0600; config token_path) and renews\n" +
			"before its 24 h TTL ends; a client holding it is entity default_client_kind:<workspace> (local).\n" +
			"The unix socket needs no token: the kernel tells it who connects.\n\n" +
			"A per-client credential (token issue --client KIND) makes a connection entity KIND:<workspace> on\n" +
			"the socket (clawd connect --client KIND) and over HTTP; what a client calls itself never does.",
		Args: cobra.NoArgs,
		RunE: needSubcommand,
	}
	cmd.AddCommand(newTokenShowCmd(), newTokenRotateCmd(), newTokenIssueCmd(), newTokenListCmd(), newTokenRevokeCmd(), newTokenHeaderCmd())
	return cmd
}

func newTokenShowCmd() *cobra.Command {
	var f clientFlags
	var kind string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the current workspace token",
		Long: "Print the workspace token (only the token, for $(clawd token show)). Prefer pointing a client at\n" +
			"the token file over pasting the token into configuration that others may read.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := runstate.ResolveWorkspace(f.options())
			if err != nil {
				return runtimeError("%v", err)
			}
			if kind != "" {
				if !config.IsClientKind(kind) {
					return usageError("--client %q: use one of %s", kind, strings.Join(config.ClientKinds, ", "))
				}
				text, err := readCredentialFile(ws, kind)
				if err != nil {
					return runtimeError("%v", err)
				}
				if ws.StateFile(runstate.TCP) == nil && ws.StateFile(runstate.Unix) == nil {
					cmd.PrintErrf("clawd: warning: no daemon is running for %s; this credential works once one is\n", shellWord(ws.Dir))
				}
				fmt.Fprintln(cmd.OutOrStdout(), text)
				return nil
			}
			path := ws.TokenPath
			st := ws.StateFile(runstate.TCP)
			if st != nil && st.TokenFile != "" {
				path = st.TokenFile
			}
			tok, err := token.ReadFile(path)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return runtimeError("no token file at %s: the token exists while `clawd serve --transport tcp_loopback --workspace %s` runs", shellWord(path), shellWord(ws.Dir))
				}
				return runtimeError("%v", err)
			}
			if w := tokenFileProblem(ws, st, path, time.Now()); w != "" {
				cmd.PrintErrf("clawd: warning: %s\n", w)
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	fl := cmd.Flags()
	f.registerWorkspace(cmd)
	fl.StringVar(&kind, "client", "", "print the saved per-client credential of this kind instead (clawd token issue)")
	f.port = -1
	return cmd
}

func newTokenRotateCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "rotate",
		Short: "Make the running daemon issue a new token and reject the old one",
		Long: "Ask the workspace's tcp_loopback daemon to issue a new token at once: every earlier token is\n" +
			"rejected from then on, and the new one is written to the token file. The request is a signal\n" +
			"(SIGUSR1) to the daemon's pid, so only its user (or root) can rotate; no token is needed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := runstate.ResolveWorkspace(f.options())
			if err != nil {
				return runtimeError("%v", err)
			}
			st := ws.StateFile(runstate.TCP)
			if st == nil {
				msg := "no tcp_loopback daemon is running for " + ws.Dir
				if ws.StateFile(runstate.Unix) != nil {
					msg += " (the unix socket daemon authenticates by peer credentials and has no token)"
				}
				return runtimeError("%s", msg)
			}
			if err := runstate.CheckLoopback(st.Addr); err != nil {
				return runtimeError("%v", err)
			}
			old, _ := token.ReadFile(st.TokenFile)
			if err := signalRotate(st); err != nil {
				return runtimeError("%v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for {
				if cur, err := token.ReadFile(st.TokenFile); err == nil && cur != old {
					fmt.Fprintf(cmd.OutOrStdout(), "rotated: the daemon (pid %d) issued a new token in %s; earlier tokens are rejected\n", st.PID, shellWord(st.TokenFile))
					return nil
				}
				select {
				case <-ctx.Done():
					return runtimeError("the daemon (pid %d) did not write a new token to %s within 5 s; see its log", st.PID, shellWord(st.TokenFile))
				case <-time.After(20 * time.Millisecond):
				}
			}
		},
	}
	f.registerWorkspace(cmd)
	f.port = -1
	return cmd
}

// tokenFileProblem says why the workspace token in path would not be
// accepted, or "" when the daemon that wrote it is running and answering.
// st is the live tcp_loopback daemon's state, nil when there is none: a
// daemon that crashed leaves its token file behind.
func tokenFileProblem(ws *runstate.Workspace, st *runstate.State, path string, now time.Time) string {
	age := ""
	if fi, err := os.Stat(path); err == nil {
		age = " (written " + now.Sub(fi.ModTime()).Round(time.Second).String() + " ago)"
		if st == nil || fi.ModTime().Before(st.Started.Add(-time.Second)) {
			return fmt.Sprintf("no tcp_loopback daemon is running for %s; the token in %s%s is left from one that stopped or crashed and is accepted by nothing: start `clawd serve --transport tcp_loopback`",
				shellWord(ws.Dir), shellWord(path), age)
		}
		if now.Sub(fi.ModTime()) > token.DefaultTTL {
			return fmt.Sprintf("the token in %s%s is past its 24 h lifetime; the daemon (pid %d) should have renewed it: see its log, or restart it", shellWord(path), age, st.PID)
		}
	}
	if st == nil {
		return fmt.Sprintf("no tcp_loopback daemon is running for %s; this token is accepted by nothing", shellWord(ws.Dir))
	}
	pid, err := runstate.ProbeHealth(st.Addr)
	switch {
	case err != nil:
		return fmt.Sprintf("the daemon (pid %d) at http://%s does not answer (%v); the token may be stale", st.PID, st.Addr, err)
	case pid != st.PID:
		return fmt.Sprintf("http://%s answers as pid %d, not the daemon's pid %d; this token may be stale", st.Addr, pid, st.PID)
	}
	return ""
}
