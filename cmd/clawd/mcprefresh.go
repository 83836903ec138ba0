package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/cli/client"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/restapi"
)

// daemonAPI finds the workspace's running daemon (its unix socket first,
// then loopback HTTP, as `clawd tools` does) and returns a client of its
// REST API: the connections and stderr rings that refresh and logs act on
// live there, not in the database.
func daemonAPI(ctx context.Context, f *clientFlags) (client.API, error) {
	t, err := f.find()
	if err != nil {
		return nil, err
	}
	if t.Unix != "" {
		c, err := client.Dial(ctx, t, daemon.Version)
		if err != nil {
			return nil, runtimeError("%s: %v", t, err)
		}
		return &client.SocketAPI{Conn: c}, nil
	}
	c, err := client.DialREST(t)
	if err != nil {
		return nil, runtimeError("%s: %v", t, err)
	}
	return c, nil
}

// apiError turns a failed API request into the command's error: the
// daemon's message, exit 1.
func apiError(what string, err error) error {
	var ae *client.APIError
	if errors.As(err, &ae) {
		return runtimeError("%s: %s", what, ae.Message)
	}
	return runtimeError("%s: %v", what, err)
}

// findServer returns the id of the server named name (without regard to
// case), as the daemon's table has it. The built-in server is a usage
// error: it is not an upstream.
func findServer(ctx context.Context, c client.API, name string) (int64, error) {
	raw, err := c.Do(ctx, "GET", restapi.Prefix+"?name="+url.QueryEscape(name), nil)
	if err != nil {
		return 0, apiError("looking up "+name, err)
	}
	var list struct {
		Servers []struct {
			ID      int64  `json:"id"`
			Name    string `json:"name"`
			Builtin bool   `json:"builtin"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(raw, &list, json.RejectUnknownMembers(false)); err != nil {
		return 0, runtimeError("the daemon's server list: %v", err)
	}
	if len(list.Servers) == 0 {
		return 0, runtimeError("no MCP server named %s; `clawd mcp list` shows them", name)
	}
	if list.Servers[0].Builtin {
		return 0, usageError("%s is clawd's own tools, not an upstream server; it has no connection or log", list.Servers[0].Name)
	}
	return list.Servers[0].ID, nil
}

type refreshResult struct {
	ID        int64   `json:"id"`
	Name      string  `json:"name"`
	OK        bool    `json:"ok"`
	Status    string  `json:"status"`
	ToolCount int     `json:"toolCount"`
	Error     string  `json:"error"`
	LatencyMS float64 `json:"latencyMs"`
}

// newMCPRefreshCmd is `clawd mcp refresh [NAME]`: the running daemon
// drops the server's connection (every enabled server's without NAME),
// connects again now (also a server in the error state) and lists its
// tools anew; the command prints how each ended.
func newMCPRefreshCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "refresh [NAME]",
		Short: "Reconnect an upstream server (or all) in the running daemon now and list its tools anew",
		Long: "Ask the workspace's running daemon to drop the connection of upstream server NAME (without NAME:\n" +
			"of every enabled one, in parallel), connect again now, also out of the error state, and list its\n" +
			"tools anew. Prints each server's status and tool count. It reaches the daemon through its REST API:\n" +
			"on its unix socket, else on loopback HTTP with the workspace token.\n" +
			"Exit 1 when no daemon runs or a server did not connect.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("unexpected argument %q: %s takes at most one server NAME\nusage: clawd mcp refresh [NAME] [--json]", args[1], cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if err := checkName(args[0]); err != nil {
					return err
				}
			}
			// The daemon bounds each server by its own timeouts (at most
			// 300 s + 300 s); this bounds the command should it not answer.
			ctx, cancel := context.WithTimeout(context.Background(), 11*time.Minute)
			defer cancel()
			c, err := daemonAPI(ctx, &f)
			if err != nil {
				return err
			}
			defer c.Close()
			if len(args) == 0 {
				return refreshAll(ctx, cmd, c, &f)
			}
			id, err := findServer(ctx, c, args[0])
			if err != nil {
				return err
			}
			raw, err := c.Do(ctx, "POST", restapi.Prefix+"/"+strconv.FormatInt(id, 10)+"/refresh", nil)
			if err != nil {
				return apiError("refresh", err)
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			var r refreshResult
			if err := json.Unmarshal(raw, &r, json.RejectUnknownMembers(false)); err != nil {
				return runtimeError("refresh: unexpected answer: %v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %d tools (refreshed in %.0f ms)\n", r.Name, r.Status, r.ToolCount, r.LatencyMS)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func refreshAll(ctx context.Context, cmd *cobra.Command, c client.API, f *clientFlags) error {
	raw, err := c.Do(ctx, "POST", restapi.Prefix+"/refresh", nil)
	if err != nil {
		return apiError("refresh", err)
	}
	var all struct {
		Servers   []refreshResult `json:"servers"`
		Refreshed int             `json:"refreshed"`
		Failed    int             `json:"failed"`
		Skipped   int             `json:"skipped"`
	}
	if err := json.Unmarshal(raw, &all, json.RejectUnknownMembers(false)); err != nil {
		return runtimeError("refresh: unexpected answer: %v", err)
	}
	if f.json {
		if err := printJSON(cmd.OutOrStdout(), raw); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSTATUS\tTOOLS\tERROR")
		for _, s := range all.Servers {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.Name, s.Status, s.ToolCount, oneLine(s.Error, 100))
		}
		tw.Flush()
		if len(all.Servers) == 0 {
			fmt.Fprintln(cmd.ErrOrStderr(), "clawd: no upstream servers are configured (clawd mcp add)")
		}
	}
	if all.Failed > 0 {
		return runtimeError("%d of %d enabled servers did not connect", all.Failed, all.Failed+all.Refreshed)
	}
	return nil
}
