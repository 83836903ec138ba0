package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/netguard"
)

// newEgressCmd is `clawd egress allow|list|rm`: the origins remote
// (http/sse) upstream servers may be reached at (docs/upstreams.md,
// "Egress").
func newEgressCmd() *cobra.Command {
	cmd := groupCmd("egress", "Manage the egress allowlist: the origins remote MCP servers may be reached at",
		"clawd connects to a remote (--http) MCP server only when its origin, scheme://host:port, is on the\n"+
			"egress allowlist, and calls its tools only while it stays there. Private and link-local addresses\n"+
			"(10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, 169.254/16, fe80::/10) are refused, also when a\n"+
			"name resolves to them at connect time, unless the origin was allowed with --private. Loopback is\n"+
			"allowed for loopback addresses (127/8, ::1) and localhost; a name that resolves to loopback needs --private too.\n"+
			"0.0.0.0, :: and multicast addresses are never dialled. Changes reach a running daemon within a second.")
	cmd.AddCommand(newEgressAllowCmd(), newEgressListCmd(), newEgressRmCmd())
	return cmd
}

// parseOriginArg reads ORIGIN, or returns a usage error naming the fix.
func parseOriginArg(s string) (netguard.Origin, error) {
	o, err := netguard.ParseOrigin(s)
	if err != nil {
		return o, usageError("%v", err)
	}
	return o, nil
}

func newEgressAllowCmd() *cobra.Command {
	var private, asJSON bool
	cmd := &cobra.Command{
		Use:   "allow [--private] ORIGIN",
		Short: "Allow connections to an origin (scheme://host[:port])",
		Long: "Allow remote MCP servers at ORIGIN (scheme://host[:port], e.g. https://mcp.example.com) to be reached.\n" +
			"The entry admits the whole origin, every path on it, and nothing else: another scheme, port or\n" +
			"host (a subdomain included) needs its own entry. --private also lets connections for this origin\n" +
			"reach private, link-local and reserved addresses, and loopback under a name; give it only for a\n" +
			"server you know lives there. Allowing an origin again changes its --private flag.",
		Args: exactArgs(1, "ORIGIN", "clawd egress allow [--private] ORIGIN [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := parseOriginArg(args[0])
			if err != nil {
				return err
			}
			if err := store.CheckEgressEntry(o, private); err != nil {
				return usageError("%v", err)
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			changed, err := allowEgress(db, o, private)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), egressResult{Origin: o.String(), Private: private, Changed: changed})
			}
			printAllowed(cmd.OutOrStdout(), o, private, changed)
			return nil
		},
	}
	cmd.Flags().BoolVar(&private, "private", false, "also allow private, link-local and reserved addresses for this origin")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"origin", "private", "changed"}`)
	return cmd
}

// egressResult is `egress allow --json` and `egress rm --json`.
type egressResult struct {
	Origin  string `json:"origin"`
	Private bool   `json:"private"`
	Changed bool   `json:"changed"`
}

func printAllowed(w io.Writer, o netguard.Origin, private, changed bool) {
	what := "allowed egress to " + o.String()
	if private {
		what += ", private addresses included"
	}
	if !changed {
		what += " (it was already)"
	}
	fmt.Fprintln(w, what)
}

// allowEgress adds the entry and puts the consent on record (an audit row
// by local:cli, like the other approvals, written before the change
// commits: no row, no change).
func allowEgress(db *store.DB, o netguard.Origin, private bool) (bool, error) {
	detail := "egress to " + o.String()
	if private {
		detail += " (private addresses allowed)"
	}
	row := auditCLI(db, "egress:"+o.String(), chain.ResultAllow, "approve: "+detail)
	changed, err := db.AllowEgress(context.Background(), o, private, row.confirm)
	row.done(err)
	if err != nil {
		return false, runtimeError("writing the egress allowlist: %v", err)
	}
	return changed, nil
}

func newEgressListCmd() *cobra.Command {
	return storeList[store.EgressRow]{
		use: "list", short: "List the allowed origins", usage: "clawd egress list [--json]",
		jsonHelp: `print an array of {"origin", "scheme", "host", "port", "private", "added_at"}`,
		what:     "the egress allowlist",
		read:     (*store.DB).EgressAllowlist,
		empty:    "No origins are allowed; clawd egress allow ORIGIN adds one.",
		header:   "ORIGIN\tPRIVATE ADDRESSES\tADDED (UTC)",
		row: func(r store.EgressRow) string {
			p := "no"
			if r.Private {
				p = "allowed"
			}
			return r.Origin + "\t" + p + "\t" + r.AddedAt
		},
	}.command()
}

func newEgressRmCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rm ORIGIN",
		Short: "Remove an origin: its servers are disconnected and their tools refused",
		Args:  exactArgs(1, "ORIGIN", "clawd egress rm ORIGIN [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := parseOriginArg(args[0])
			if err != nil {
				return err
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			row := auditCLI(db, "egress:"+o.String(), chain.ResultDeny, "approve: egress to "+o.String()+" withdrawn")
			removed, err := db.DisallowEgress(context.Background(), o, row.confirm)
			row.done(err)
			if err != nil {
				return runtimeError("writing the egress allowlist: %v", err)
			}
			if !removed {
				return runtimeError("%s is not on the egress allowlist (clawd egress list shows it)", o)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), egressResult{Origin: o.String(), Changed: true})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s from the egress allowlist\n", o)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"origin", "private", "changed"}`)
	return cmd
}

// checkAddEgress validates an http server's URL for `mcp add` before
// anything is stored: an origin clawd would never connect to is a usage
// error, and so is --allow for an address that needs --private without it.
func checkAddEgress(rawURL string, allow, private bool) (netguard.Origin, error) {
	o, err := netguard.OriginOfURL(rawURL)
	if err != nil {
		return o, usageError("--http: %v", err)
	}
	if private && !allow {
		return o, usageError("--private goes with --allow (it widens the egress entry --allow adds)")
	}
	if allow {
		if err := store.CheckEgressEntry(o, private); err != nil {
			return o, usageError("--allow: %v", err)
		}
	}
	return o, nil
}

// proposeEgress follows `mcp add --http`: with --allow it adds the origin
// (and says so), otherwise it prints the exact line that would, unless
// the origin is allowed already. Output goes to w (stderr with --json, so
// the JSON stays one document).
func proposeEgress(w io.Writer, db *store.DB, o netguard.Origin, allow, private bool) error {
	if allow {
		changed, err := allowEgress(db, o, private)
		if err != nil {
			return err
		}
		printAllowed(w, o, private, changed)
		return nil
	}
	if _, ok, err := db.EgressPolicy(o); err == nil && ok {
		return nil
	}
	needPrivate := store.CheckEgressEntry(o, false) != nil
	fmt.Fprintf(w, "clawd connects to it only once its origin is allowed:\n  %s\n", netguard.AllowCommand(o, needPrivate))
	return nil
}
