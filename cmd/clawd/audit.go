package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
)

func newAuditCmd() *cobra.Command {
	var f store.AuditFilter
	var result string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the policy audit log",
		Long: "Show the newest rows of the policy audit log, oldest first: one row per tools/call that passed\n" +
			"authentication, allowed or denied, with the step that decided and, for allowed calls, how they\n" +
			"ended (outcome). --entity takes an entity id or KIND:* (e.g. device:*).",
		Args: noArgs("clawd audit [--limit N] [--entity E] [--tool T] [--result Allow|Deny] [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.Limit < 0 {
				return usageError("--limit %d: use a positive number of rows, or 0 for all", f.Limit)
			}
			if f.Entity != "" {
				if err := chain.ValidateEntity(f.Entity); err != nil {
					return usageError("--entity: %v", err)
				}
			}
			switch strings.ToLower(result) {
			case "":
			case "allow":
				f.Result = chain.ResultAllow
			case "deny":
				f.Result = chain.ResultDeny
			default:
				return usageError("--result %q: use Allow or Deny", result)
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			rows, err := db.QueryAudit(context.Background(), f)
			if err != nil {
				return runtimeError("reading the audit log: %v", err)
			}
			if asJSON {
				if rows == nil {
					rows = []store.AuditRow{}
				}
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			printAudit(cmd.OutOrStdout(), rows)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.Limit, "limit", 50, "show the newest N rows (0 = all)")
	fl.StringVar(&f.Entity, "entity", "", "only this entity (or KIND:*)")
	fl.StringVar(&f.Tool, "tool", "", "only this tool")
	fl.StringVar(&result, "result", "", "only Allow or Deny")
	fl.BoolVar(&asJSON, "json", false, "print JSON (an array of rows, with every column)")
	return cmd
}

func printAudit(w io.Writer, rows []store.AuditRow) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "No audit rows match.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIME (UTC)\tENTITY\tCLIENT SAYS\tTOOL\tLEVEL\tRESULT\tSTEP\tREASON\tDECIDED IN\tOUTCOME")
	for _, r := range rows {
		level := "-"
		if r.TrustLevel != nil {
			level = fmt.Sprint(*r.TrustLevel)
		}
		outcome := "-"
		if r.Outcome != nil {
			outcome = *r.Outcome
			if r.OutcomeDetail != nil {
				outcome += " (" + *r.OutcomeDetail + ")"
			}
			if r.DurationMS != nil {
				outcome += fmt.Sprintf(" %dms", *r.DurationMS)
			}
		}
		// The entity comes from the credential; the claim is only what the
		// client called itself (clientInfo.name), shown so the two can be
		// compared. A credential id follows the entity.
		entity := r.EntityID
		if r.CredentialID != nil {
			entity += " (credential " + *r.CredentialID + ")"
		}
		claim := "-"
		if r.ClientClaim != nil {
			claim = clipText(printable(*r.ClientClaim), 40)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%dus\t%s\n", r.ID, r.Timestamp, entity, claim,
			printable(r.ToolID), level, r.Result, r.Step, r.Reason, r.LatencyUS, printable(outcome))
	}
	tw.Flush()
}

// printable keeps caller-chosen text (tool names of unknown tools) from
// moving the terminal's cursor or columns.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// clipText shortens s to at most n runes, marking the cut.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
