package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/safetext"
)

func newAuditCmd() *cobra.Command {
	var f store.AuditFilter
	var result, since string
	var asJSON, utc, follow bool
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the policy audit log",
		Long: "Show the newest rows of the policy audit log, oldest first: one row per tools/call that passed\n" +
			"authentication, allowed or denied, with the step that decided, a short secret-masked summary of\n" +
			"the arguments (path, command's first line; --json adds their SHA-256) and, for allowed calls, how\n" +
			"they ended (outcome: ok, timeout, tool_error, cancelled, ...). Times are local unless --utc.\n" +
			"--entity takes an entity id or KIND:* (e.g. device:*). --since takes a duration (90m, 24h, 7d)\n" +
			"or a time (2026-01-31, 2026-01-31T15:04, RFC 3339). --follow prints new rows as they come until\n" +
			"interrupted. Rows stay until 'clawd audit prune' removes them.\n\n" +
			"--server NAME selects one upstream MCP server's rows: its events (spawn, connect, disconnect,\n" +
			"refusals, approvals; tool mcp:NAME) and the calls of its tools under whatever name they were\n" +
			"exposed (docs/upstreams.md, \"Audit\").",
		Args: noArgs("clawd audit [--limit N] [--since D|T] [--entity E] [--tool T] [--server NAME] [--result Allow|Deny] [--utc] [--follow] [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.Limit < 0 {
				return usageError("--limit %d: use a positive number of rows, or 0 for all", f.Limit)
			}
			if f.Entity != "" {
				if err := chain.ValidateEntity(f.Entity); err != nil {
					return usageError("--entity: %v", err)
				}
			}
			if f.Server != "" {
				if err := store.ValidateServerName(f.Server); err != nil {
					return usageError("--server: %v", err)
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
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return usageError("--since %q: %v", since, err)
				}
				f.Since = t
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			p := auditPrinter{w: cmd.OutOrStdout(), json: asJSON, follow: follow, loc: time.Local}
			if utc {
				p.loc = time.UTC
			}
			rows, err := db.QueryAudit(context.Background(), f)
			if err != nil {
				return runtimeError("reading the audit log: %v", err)
			}
			if err := p.print(rows); err != nil || !follow {
				return err
			}
			return followAudit(cmd.Context(), db, f, rows, &p)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.Limit, "limit", 50, "show the newest N rows (0 = all)")
	fl.StringVar(&since, "since", "", "only rows from this time on: a duration back from now (90m, 24h, 7d) or a time")
	fl.StringVar(&f.Entity, "entity", "", "only this entity (or KIND:*)")
	fl.StringVar(&f.Tool, "tool", "", "only this tool")
	fl.StringVar(&f.Server, "server", "", "only this upstream MCP server's events and calls")
	fl.StringVar(&result, "result", "", "only Allow or Deny")
	fl.BoolVar(&utc, "utc", false, "show times in UTC (default: local time)")
	fl.BoolVar(&follow, "follow", false, "keep printing new rows as they are written, until interrupted")
	fl.BoolVar(&asJSON, "json", false, "print JSON (an array of rows with every column; with --follow one row per line)")
	cmd.AddCommand(newAuditPruneCmd())
	return cmd
}

// followAudit polls for rows after the last one shown until ctx ends (the
// daemon commits rows in batches within milliseconds; 500 ms is fast
// enough for a human and costs one indexed read).
func followAudit(ctx context.Context, db *store.DB, f store.AuditFilter, shown []store.AuditRow, p *auditPrinter) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	f.Limit = 0
	for _, r := range shown {
		f.AfterID = max(f.AfterID, r.ID)
	}
	if f.AfterID == 0 {
		// Nothing matched yet: start after the newest row of any kind.
		if last, err := db.QueryAudit(ctx, store.AuditFilter{Limit: 1}); err == nil && len(last) == 1 {
			f.AfterID = last[0].ID
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
		rows, err := db.QueryAudit(ctx, f)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return runtimeError("reading the audit log: %v", err)
		}
		if len(rows) == 0 {
			continue
		}
		f.AfterID = rows[len(rows)-1].ID
		if err := p.print(rows); err != nil {
			return err
		}
	}
}

func newAuditPruneCmd() *cobra.Command {
	var olderThan string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prune --older-than DURATION|TIME",
		Short: "Delete audit rows older than a duration or time",
		Long: "Delete the audit rows written before --older-than (a duration back from now, e.g. 90d, 720h, or a\n" +
			"time, e.g. 2026-01-31). clawd never deletes audit rows by itself: the log keeps every decision\n" +
			"until you prune it, so choose your retention and run this (e.g. from cron) to keep to it.\n" +
			"The newest row always stays, so row ids are never given twice.",
		Args: noArgs("clawd audit prune --older-than DURATION|TIME [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if olderThan == "" {
				return usageError("audit prune needs --older-than DURATION|TIME (e.g. --older-than 90d)")
			}
			before, err := parseSince(olderThan, time.Now())
			if err != nil {
				return usageError("--older-than %q: %v", olderThan, err)
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			// The prune is on record: a row (local:cli, tool audit:prune)
			// written before the deletion commits, or nothing is deleted.
			row := auditCLI(db, "audit:prune", chain.ResultAllow, "")
			row.step = "audit"
			n, err := db.PruneAudit(context.Background(), before, func(deleted int64) error {
				row.reason = fmt.Sprintf("prune: deleted %d rows written before %s", deleted, before.UTC().Format(time.RFC3339))
				return row.confirm()
			})
			row.done(err)
			if err != nil {
				return runtimeError("%v", err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"deleted": n, "before": before.UTC().Format(time.RFC3339)})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %d audit rows written before %s\n", n, before.Local().Format("2006-01-02 15:04:05 MST"))
			return nil
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "a duration back from now (90d, 720h) or a time (2026-01-31)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"deleted", "before"} (before in UTC, RFC 3339)`)
	return cmd
}

// maxSinceDays bounds a day count for parseSince: about 2,700 years.
const maxSinceDays = 1000000

// parseSince reads a duration back from now (Go's units plus d for days)
// or a time: RFC 3339, or a local date with an optional time of day.
func parseSince(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			// Going back further overflows time's arithmetic, which can
			// wrap into a cutoff after now: prune would delete every row.
			if n > maxSinceDays {
				return time.Time{}, fmt.Errorf("%d days is too far back: use at most %d days, or a date", n, maxSinceDays)
			}
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("a duration back from now must not be negative")
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("use a duration (90m, 24h, 7d) or a time (2026-01-31, 2026-01-31T15:04, or RFC 3339)")
}

// auditPrinter prints rows as a table (the header once) or as JSON.
type auditPrinter struct {
	w       io.Writer
	json    bool
	follow  bool
	loc     *time.Location
	started bool
}

func (p *auditPrinter) print(rows []store.AuditRow) error {
	if p.json {
		if !p.follow {
			if rows == nil {
				rows = []store.AuditRow{}
			}
			return writeJSON(p.w, rows)
		}
		for _, r := range rows {
			b, err := json.Marshal(r)
			if err != nil {
				return runtimeError("%v", err)
			}
			fmt.Fprintf(p.w, "%s\n", b)
		}
		return nil
	}
	if len(rows) == 0 {
		if !p.follow {
			fmt.Fprintln(p.w, "No audit rows match.")
		}
		return nil
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	if !p.started {
		zone := "local"
		if p.loc == time.UTC {
			zone = "UTC"
		}
		fmt.Fprintf(tw, "ID\tTIME (%s)\tENTITY\tCLIENT SAYS\tTOOL\tARGUMENTS\tLEVEL\tRESULT\tSTEP\tREASON\tDECIDED IN\tOUTCOME\n", zone)
		p.started = true
	}
	for _, r := range rows {
		level := "-"
		if r.TrustLevel != nil {
			level = fmt.Sprint(*r.TrustLevel)
		}
		// The entity comes from the credential; the claim is only what the
		// client called itself (clientInfo.name), shown so the two can be
		// compared. A credential id follows the entity.
		entity := cell(r.EntityID)
		if r.CredentialID != nil {
			entity += " (credential " + cell(*r.CredentialID) + ")"
		}
		claim := "-"
		if r.ClientClaim != nil {
			claim = clipText(cell(*r.ClientClaim), 40)
		}
		summary := "-"
		if r.ArgsSummary != nil {
			summary = clipText(cell(*r.ArgsSummary), 60)
		}
		// A hash-shortened exposed name does not show its server: add it.
		tool := cell(r.ToolID)
		if r.Server != nil && !strings.HasPrefix(r.ToolID, *r.Server+"__") && !strings.HasPrefix(r.ToolID, "mcp:") {
			tool += " (server " + cell(*r.Server) + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%dus\t%s\n", r.ID, cell(auditTime(r.Timestamp, p.loc)), entity, claim,
			tool, summary, level, cell(r.Result), cell(r.Step), cell(r.Reason), r.LatencyUS, cell(outcomeText(r)))
	}
	return tw.Flush()
}

// outcomeText is "outcome (detail) Nms", the detail left out when it only
// repeats the outcome (rows written before that was fixed say
// "tool_error" twice).
func outcomeText(r store.AuditRow) string {
	if r.Outcome == nil {
		return "-"
	}
	out := *r.Outcome
	if r.OutcomeDetail != nil && *r.OutcomeDetail != "" && *r.OutcomeDetail != *r.Outcome {
		out += " (" + *r.OutcomeDetail + ")"
	}
	if r.DurationMS != nil {
		out += fmt.Sprintf(" %dms", *r.DurationMS)
	}
	return out
}

// auditTime shows a stored UTC timestamp in loc.
func auditTime(ts string, loc *time.Location) string {
	t, err := time.Parse("2006-01-02T15:04:05.000Z", ts)
	if err != nil {
		return ts
	}
	return t.In(loc).Format("2006-01-02 15:04:05.000")
}

// printable keeps caller-chosen text (tool names of unknown tools) from
// moving the terminal's cursor or columns: control characters, and the
// invisible ones safetext removes elsewhere (bidi overrides, zero-width
// characters, line separators), show as '?'.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || safetext.Forbidden(r) {
			return '?'
		}
		return r
	}, s)
}

// cell is an audit table cell: printable, with runs of spaces collapsed,
// so text in a column (a client's tool name or clientInfo.name, a row
// written behind clawd's back) cannot pose as further columns, whose gaps
// are two spaces wide at least.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) { // no-break and other wide spaces too
			return ' '
		}
		return r
	}, printable(s))
	if !strings.Contains(s, "  ") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// clipText shortens s to at most n runes, marking the cut.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
