package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
)

func newMCPCmd() *cobra.Command {
	cmd := groupCmd("mcp", "Manage upstream MCP servers and their supply-chain allowlist",
		"Upstream MCP servers are servers someone else built whose tools clawd offers next to its own, as\n"+
			"SERVER__TOOL: add, list, show, rm, enable, disable and tools edit and read their configuration\n"+
			"in clawd's database, with or without a running daemon (docs/upstreams.md).\n\n"+
			"Tools of an upstream MCP server run only if the SHA-256 of the server's binary is allowlisted for\n"+
			"its server id (allow, disallow, allowlist). A refused call (-32004 supply_chain_denied) names both\n"+
			"in its error data.\n\n"+
			"Each upstream tool is offered only while its definition is one you approved: a new or changed\n"+
			"tool is hidden and refused until clawd mcp approve NAME [TOOL]; clawd mcp diff NAME shows what\n"+
			"changed.")
	cmd.AddCommand(newMCPAddCmd(), newMCPListCmd(), newMCPShowCmd(), newMCPRmCmd(), newMCPTestCmd(),
		newMCPEnableCmd(true), newMCPEnableCmd(false), newMCPToolsCmd(), newMCPRefreshCmd(), newMCPLogsCmd(),
		newMCPAllowCmd(), newMCPAllowlistCmd(), newMCPDisallowCmd(), newMCPApproveCmd(), newMCPDiffCmd(),
		newMCPSetCmd(), newMCPIdentityKeyCmd())
	return cmd
}

// parseServerHash validates --server and --sha256 (hex, either case).
func parseServerHash(server, sum string, sumRequired bool) (string, string, error) {
	if server == "" {
		return "", "", usageError("--server ID is required")
	}
	if err := chain.ValidateServerID(server); err != nil {
		return "", "", usageError("--server: %v", err)
	}
	sum = strings.ToLower(sum)
	if sum == "" && !sumRequired {
		return server, "", nil
	}
	if err := store.ValidateSHA256(sum); err != nil {
		return "", "", usageError("--sha256: %v", err)
	}
	return server, sum, nil
}

func newMCPAllowCmd() *cobra.Command {
	var server, sum string
	cmd := &cobra.Command{
		Use:   "allow --server ID --sha256 HEX",
		Short: "Allowlist a server binary's SHA-256",
		Args:  noArgs("clawd mcp allow --server ID --sha256 HEX"),
		RunE: func(cmd *cobra.Command, args []string) error {
			server, sum, err := parseServerHash(server, sum, true)
			if err != nil {
				return err
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			added, err := db.AllowServer(context.Background(), server, sum)
			if err != nil {
				return runtimeError("writing the allowlist: %v", err)
			}
			if added {
				fmt.Fprintf(cmd.OutOrStdout(), "allowlisted %s %s\n", server, sum)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s was already allowlisted\n", server, sum)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server id")
	cmd.Flags().StringVar(&sum, "sha256", "", "the SHA-256 of its binary (64 hex digits)")
	return cmd
}

func newMCPDisallowCmd() *cobra.Command {
	var server, sum string
	cmd := &cobra.Command{
		Use:   "disallow --server ID [--sha256 HEX]",
		Short: "Remove a server's allowlist entries (one hash, or all)",
		Args:  noArgs("clawd mcp disallow --server ID [--sha256 HEX]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			server, sum, err := parseServerHash(server, sum, false)
			if err != nil {
				return err
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			n, err := db.DisallowServer(context.Background(), server, sum)
			if err != nil {
				return runtimeError("writing the allowlist: %v", err)
			}
			if n == 0 {
				what := "server " + server
				if sum != "" {
					what += " with sha256 " + sum
				}
				return runtimeError("no allowlist entry for %s; 'clawd mcp allowlist' shows them", what)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d allowlist entry(ies) for %s\n", n, server)
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server id")
	cmd.Flags().StringVar(&sum, "sha256", "", "only this hash")
	return cmd
}

func newMCPAllowlistCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "allowlist",
		Short: "List the supply-chain allowlist",
		Args:  noArgs("clawd mcp allowlist [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			list, err := db.Allowlist(context.Background())
			if err != nil {
				return runtimeError("reading the allowlist: %v", err)
			}
			if asJSON {
				if list == nil {
					list = []store.AllowRow{}
				}
				return writeJSON(cmd.OutOrStdout(), list)
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "The allowlist is empty: only clawd's built-in tools run. Add a server with 'clawd mcp allow --server ID --sha256 HEX'.")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SERVER\tSHA256\tADDED (UTC)")
			for _, a := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", a.Server, a.SHA256, a.AddedAt)
			}
			tw.Flush()
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
