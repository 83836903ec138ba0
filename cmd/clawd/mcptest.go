package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/upstream"
)

// newMCPTestCmd is `clawd mcp test NAME`: one throwaway connection made by
// the command itself (no daemon needed) with exactly the configuration a
// daemon would use, behind the same allowlist check, so a server that
// fails here fails there too. Nothing is registered or recorded.
func newMCPTestCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "test NAME",
		Short: "Connect to an MCP server once: print how long it took and the tools it offers",
		Args:  exactArgs(1, "the server's NAME", "clawd mcp test NAME [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The server is a process of the same user and can read our
			// /proc/<pid>/environ: take clawd's own variables out of the
			// kernel's copy first, as serve does (a re-exec, same pid).
			if err := daemon.HideEnvSecrets(); err != nil {
				return runtimeError("%v", err)
			}
			db, s, err := lookupServer(args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			if s.Builtin {
				return usageError("%s is clawd's own tools, not an upstream server; `clawd tools` lists them", s.Name)
			}
			cfgs := daemon.UpstreamConfigs([]store.MCPServer{s})
			cfg := cfgs[0]
			cfg.Enabled = true // testing a disabled server is how one checks it before enabling it
			// The server is started here, not by a daemon: what our own
			// caller leaked into us must not reach it (as in serve).
			daemon.CloseOnExecInherited()
			m := upstream.NewManager(nil, upstream.Options{VerifyLaunch: daemon.VerifyUpstream(db),
				VerifyOrigin: daemon.VerifyEgress(db), NameLimit: upstreamNameLimit()})
			wait := cfg.ConnectTimeout + cfg.ReadTimeout
			if wait <= 0 {
				wait = upstream.DefaultConnectTimeout + upstream.DefaultReadTimeout
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			defer m.Close(context.Background())
			res, err := m.Test(ctx, cfg)
			if err != nil {
				return runtimeError("%s: %v", s.Name, err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), mcpTestJSON(s.Name, res))
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%s: %s %s, protocol %s; connected in %v, tools listed in %v\n", s.Name,
				oneLine(res.ServerName, 0), oneLine(res.ServerVersion, 0), oneLine(res.ProtocolVersion, 0),
				res.Latency.Round(time.Millisecond), res.ListLatency.Round(time.Millisecond))
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tUPSTREAM NAME\tDESCRIPTION")
			for _, t := range res.Tools {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Exposed, oneLine(t.Original, 0), oneLine(t.Description, 60))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// mcpTestJSON is `clawd mcp test --json`'s shape.
func mcpTestJSON(name string, r upstream.TestResult) any {
	type tool struct {
		Name        string `json:"name"`
		Upstream    string `json:"upstream_name"`
		Description string `json:"description"`
		Note        string `json:"note,omitempty"`
	}
	tools := make([]tool, 0, len(r.Tools))
	for _, t := range r.Tools {
		tools = append(tools, tool{t.Exposed, t.Original, t.Description, t.Note})
	}
	return struct {
		Name            string  `json:"name"`
		ServerName      string  `json:"server_name"`
		ServerVersion   string  `json:"server_version"`
		ProtocolVersion string  `json:"protocol_version"`
		ConnectMS       float64 `json:"connect_ms"`
		ListMS          float64 `json:"list_ms"`
		Tools           []tool  `json:"tools"`
	}{name, r.ServerName, r.ServerVersion, r.ProtocolVersion,
		float64(r.Latency.Microseconds()) / 1000, float64(r.ListLatency.Microseconds()) / 1000, tools}
}

// upstreamNameLimit is upstream_tool_name_max from the config file, so
// `mcp test` shows the names a daemon would offer; the default when the
// file is missing or invalid (`clawd doctor` reports that).
func upstreamNameLimit() int {
	if p, err := config.DefaultPaths(); err == nil {
		if cfg, err := config.Load(p.ConfigFile, false); err == nil {
			return cfg.UpstreamToolNameMax
		}
	}
	return config.Default().UpstreamToolNameMax
}
