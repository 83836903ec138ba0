package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/upstream"
)

func newMCPCmd() *cobra.Command {
	cmd := groupCmd("mcp", "Manage upstream MCP servers and their supply-chain allowlist",
		"Upstream MCP servers are servers someone else built whose tools clawd offers next to its own, as\n"+
			"SERVER__TOOL: add, list, show, rm, enable, disable and tools edit and read their configuration\n"+
			"in clawd's database, with or without a running daemon (docs/upstreams.md).\n\n"+
			"A stdio server starts only once approved for its name: the SHA-256 of its executable and, for an\n"+
			"interpreter or npx, of the script or the npm package it runs (allow, disallow, allowlist). Until\n"+
			"then its last error (supply_chain_unverified) gives the exact command and the allow line; a\n"+
			"refused call (-32004 supply_chain_denied) names both in its error data.\n\n"+
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
		return "", "", usageError("--server ID is required: the server's name as clawd mcp list shows it (clawd mcp allow NAME also works: it shows what the server runs and asks)")
	}
	if err := chain.ValidateServerID(server); err != nil {
		return "", "", usageError("--server: %v", err)
	}
	sum = strings.ToLower(sum)
	if sum == "" {
		if sumRequired {
			return "", "", usageError("--sha256 HEX is required with --server: the SHA-256 of the executable %s runs, as its refused start's last error gives it or `sha256sum BINARY` prints it ('clawd mcp allow %s' works it out and asks)", server, server)
		}
		return server, "", nil
	}
	if err := store.ValidateSHA256(sum); err != nil {
		return "", "", usageError("--sha256: %v", err)
	}
	return server, sum, nil
}

func newMCPAllowCmd() *cobra.Command {
	var server, sum, scriptSum, pkg, integrity string
	var yes, asJSON bool
	const usage = "clawd mcp allow NAME [--yes] | clawd mcp allow --server ID --sha256 HEX [--script-sha256 HEX] [--package NAME@VERSION --integrity SRI]"
	cmd := &cobra.Command{
		Use:   "allow (NAME [--yes] | --server ID --sha256 HEX [--script-sha256 HEX] [--package NAME@VERSION --integrity SRI])",
		Short: "Approve what a stdio server runs (its executable's SHA-256, and its script or npm package)",
		Long: "Approve a stdio server so clawd starts it. Two forms:\n\n" +
			"  clawd mcp allow NAME         resolve NAME's command now, show the exact command and every pin\n" +
			"                               (executable SHA-256; a node/python/... script's SHA-256; the version\n" +
			"                               and integrity of an npx package), ask, and store them (--yes: no question)\n" +
			"  clawd mcp allow --server ID --sha256 HEX [--script-sha256 HEX] [--package N@V --integrity SRI]\n" +
			"                               store exactly these hashes: the line a refused server's last error gives\n\n" +
			"docs/upstreams.md (\"Approval: what is pinned\") says what is and is not covered.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("one server NAME at most\nusage: %s", usage)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if server != "" || sum != "" || scriptSum != "" || pkg != "" || integrity != "" {
					return usageError("give either NAME or --server with hashes, not both\nusage: %s", usage)
				}
				db, s, err := lookupServer(args[0])
				if err != nil {
					return err
				}
				defer db.Close()
				out := cmd.OutOrStdout()
				if asJSON {
					out = cmd.ErrOrStderr()
				}
				a := newApproval(yes, out)
				if a.in == nil && !yes {
					return usageError("no terminal to ask on: pass --yes to approve %s as resolved now\nusage: %s", s.Name, usage)
				}
				l, ok, err := approveServer(db, s, a)
				if err != nil {
					return err
				}
				if asJSON {
					if err := writeJSON(cmd.OutOrStdout(), map[string]any{"approved": ok, "server": s.Name, "pins": l.Pins()}); err != nil {
						return err
					}
				}
				if !ok { // a no is exit 1 with --json too: scripts read the code
					return runtimeError("%s was not approved", s.Name)
				}
				return nil
			}
			return allowHashes(cmd, server, sum, scriptSum, pkg, integrity, asJSON, usage)
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server id")
	cmd.Flags().StringVar(&sum, "sha256", "", "the SHA-256 of its executable (64 hex digits)")
	cmd.Flags().StringVar(&scriptSum, "script-sha256", "", "the SHA-256 of the script its interpreter runs")
	cmd.Flags().StringVar(&pkg, "package", "", "the npm package npx runs, NAME@VERSION")
	cmd.Flags().StringVar(&integrity, "integrity", "", "that package's integrity (sha512-..., from its lockfile)")
	cmd.Flags().BoolVar(&yes, "yes", false, "with NAME: approve without asking")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func newMCPDisallowCmd() *cobra.Command {
	var server, sum string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "disallow --server ID [--sha256 HEX]",
		Short: "Remove a server's allowlist entries (one hash, or all)",
		Args:  noArgs("clawd mcp disallow --server ID [--sha256 HEX] [--json]"),
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
			withdrawn := "approve: withdrawn"
			if sum != "" {
				withdrawn += ": sha256 " + sum
			}
			row := auditCLI(db, "mcp:"+server, chain.ResultDeny, withdrawn)
			n, err := db.DisallowServer(context.Background(), server, sum, row.confirm)
			row.done(err)
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
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"server": server, "sha256": sum, "removed": n})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d allowlist entry(ies) for %s\n", n, server)
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server id")
	cmd.Flags().StringVar(&sum, "sha256", "", "only this hash")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"server", "sha256", "removed"}`)
	return cmd
}

func newMCPAllowlistCmd() *cobra.Command {
	return storeList[store.AllowRow]{
		use: "allowlist", short: "List the supply-chain allowlist", usage: "clawd mcp allowlist [--json]",
		jsonHelp: "print JSON",
		what:     "the allowlist",
		read:     (*store.DB).Allowlist,
		empty:    "The allowlist is empty: only clawd's built-in tools run. Add a server with 'clawd mcp allow --server ID --sha256 HEX'.",
		header:   "SERVER\tSHA256\tADDED (UTC)",
		row:      func(a store.AllowRow) string { return a.Server + "\t" + a.SHA256 + "\t" + a.AddedAt },
	}.command()
}

// allowHashes is `clawd mcp allow --server ID --sha256 HEX [...]`: it
// stores exactly the hashes given (the line a refusal prints), with the
// script's path or the lockfile as detail when the server's command
// resolves to those very hashes now.
func allowHashes(cmd *cobra.Command, server, sum, scriptSum, pkg, integrity string, asJSON bool, usage string) error {
	server, sum, err := parseServerHash(server, sum, true)
	if err != nil {
		return err
	}
	var pins []store.PinRow
	if scriptSum != "" {
		pins = append(pins, store.PinRow{Kind: store.PinScript, Digest: strings.ToLower(scriptSum)})
	}
	if (pkg == "") != (integrity == "") {
		return usageError("--package and --integrity go together\nusage: %s", usage)
	}
	if pkg != "" {
		pins = append(pins, store.PinRow{Kind: store.PinPackage, Subject: pkg, Digest: integrity})
	}
	for _, p := range pins {
		p.Server = server
		if err := store.ValidatePin(p); err != nil {
			return usageError("%v\nusage: %s", err, usage)
		}
	}
	db, err := openStore()
	if err != nil {
		return err
	}
	defer db.Close()
	if s, err := db.MCPServerByName(context.Background(), server); err == nil {
		// Name the script's path for `mcp show`, if it is the one hashed.
		if l, err := upstream.ResolveLaunch(daemon.UpstreamConfigs([]store.MCPServer{s})[0], nil); err == nil {
			for i := range pins {
				if pins[i].Kind == store.PinScript && pins[i].Digest == l.ScriptSHA256 {
					pins[i].Detail = l.Script
				}
				if pins[i].Kind == store.PinPackage && pins[i].Subject == l.Package && pins[i].Digest == l.Integrity {
					pins[i].Detail = l.Lockfile
				}
			}
		}
	}
	what := []string{"sha256 " + sum}
	for _, p := range pins {
		what = append(what, p.Kind+" "+strings.TrimSpace(p.Subject+" "+p.Digest))
	}
	row := auditCLI(db, "mcp:"+server, chain.ResultAllow, "approve: "+strings.Join(what, "; "))
	added, err := db.Approve(context.Background(), server, sum, pins, row.confirm)
	row.done(err)
	if err != nil {
		return runtimeError("writing the allowlist: %v", err)
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), map[string]any{"approved": true, "added": added, "server": server, "pins": what})
	}
	if added {
		fmt.Fprintf(cmd.OutOrStdout(), "allowlisted %s %s\n", server, strings.Join(what, ", "))
	} else {
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s was already allowlisted\n", server, strings.Join(what, ", "))
	}
	return nil
}
