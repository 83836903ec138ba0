package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/store"
)

// openStore opens the database the daemons use. The CLI works on it
// directly, whether or not a daemon runs; a running daemon sees a change on
// its next call (store.DB.Lookup checks the registry's generation).
func openStore() (*store.DB, error) {
	p, err := config.DefaultPaths()
	if err != nil {
		return nil, runtimeError("%v", err)
	}
	db, err := store.Open(p.DBFile, store.Options{})
	if err != nil {
		return nil, runtimeError("%v (clawd keeps its trust registry, audit log and MCP servers in %s; check that directory's permissions, or set XDG_DATA_HOME)", err, p.DataDir)
	}
	return db, nil
}

// groupCmd is a command that only holds subcommands: run bare or with an
// unknown subcommand it is a usage error (exit 2), not a silent help page.
func groupCmd(use, short, long string) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Long: long,
		Args: cobra.NoArgs,
		RunE: needSubcommand,
	}
}

// needSubcommand is the RunE of a command that only holds subcommands.
func needSubcommand(cmd *cobra.Command, args []string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return usageError("%s needs a subcommand: %s\nRun '%s --help' for usage.", strings.TrimPrefix(cmd.CommandPath(), "clawd "), strings.Join(names, ", "), cmd.CommandPath())
}

// levelMeaning is the default table of a trust level (chain.Evaluate).
var levelMeaning = map[int]string{
	0: "nothing",
	1: "read tools",
	2: "read, write and execute tools",
	3: "all tools, upstream ones too",
}

func newTrustCmd() *cobra.Command {
	cmd := groupCmd("trust", "Show or edit the trust registry (who may call which tools)",
		"The trust registry decides which entity may call which tool. An entity is KIND:SUBJECT:\n"+
			"cc (Claude Code), oc (OpenCode), local (other clients) or device (a paired device), and a\n"+
			"workspace or device id; KIND:* matches every entity of that kind. Each row has a trust level:\n"+
			"  0 nothing   1 read tools   2 adds write and execute (write_file, bash)   3 adds upstream tools\n"+
			"and optional per-tool permissions that override the level, and bindings (bind, unbind) that make\n"+
			"a set of upstream tools the only ones an entity lists and calls.")
	cmd.AddCommand(newTrustListCmd(), newTrustSetCmd(), newTrustRmCmd(), newTrustBindCmd(), newTrustUnbindCmd())
	return cmd
}

func newTrustListCmd() *cobra.Command {
	return storeList[store.TrustRow]{
		use: "list", short: "List the trust registry", usage: "clawd trust list [--json]",
		jsonHelp: "print JSON",
		what:     "the trust registry",
		read:     (*store.DB).TrustRows,
		asJSON:   func(rows []store.TrustRow) any { return trustJSON(rows) },
		empty:    "The trust registry is empty: every call is refused (unknown_entity). Add a row with 'clawd trust set ENTITY LEVEL'.",
		header:   "ENTITY\tLEVEL\tALLOW\tDENY\tBOUND\tUPDATED",
		row: func(r store.TrustRow) string {
			allow, deny := permLists(r.Perms)
			return fmt.Sprintf("%s\t%d (%s)\t%s\t%s\t%s\t%s", r.Entity, r.Level, levelMeaning[r.Level], orDash(allow), orDash(deny),
				orDash(boundTools(r.Perms)), r.UpdatedAt)
		},
	}.command()
}

type trustRowJSON struct {
	Entity      string            `json:"entity_id"`
	Level       int               `json:"trust_level"`
	Permissions map[string]string `json:"permissions"`
	UpdatedAt   string            `json:"updated_at"`
}

func trustJSON(rows []store.TrustRow) []trustRowJSON {
	out := make([]trustRowJSON, 0, len(rows))
	for _, r := range rows {
		out = append(out, trustRowJSON{r.Entity, r.Level, r.Perms, r.UpdatedAt})
	}
	return out
}

func permLists(perms map[string]string) (allow, deny []string) {
	for t, p := range perms {
		switch p {
		case chain.PermAllow:
			allow = append(allow, t)
		case chain.PermDeny:
			deny = append(deny, t)
		} // bind: boundTools
	}
	sort.Strings(allow)
	sort.Strings(deny)
	return allow, deny
}

func orDash(list []string) string {
	if len(list) == 0 {
		return "-"
	}
	return strings.Join(list, ",")
}

func newTrustSetCmd() *cobra.Command {
	var allow, deny []string
	var asJSON bool
	const usage = "clawd trust set ENTITY LEVEL [--allow TOOL]... [--deny TOOL]... [--json]"
	cmd := &cobra.Command{
		Use:   "set ENTITY LEVEL",
		Short: "Create or replace an entity's row",
		Long: "Create or replace ENTITY's row: its trust LEVEL (0-3) and exactly the per-tool permissions given\n" +
			"(an earlier row's --allow/--deny are dropped; its bindings are kept, see trust bind). --allow TOOL\n" +
			"lets the entity call TOOL whatever its level; --deny TOOL refuses it. Both repeat, or take a\n" +
			"comma-separated list; SERVER__* names every tool of an upstream server.\n\n" +
			"Example: clawd trust set device:phone1 1 --deny search",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError("trust set needs ENTITY and LEVEL (got %d argument(s))\nusage: %s", len(args), usage)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := parseTrustArgs(args[0], args[1], allow, deny)
			if err != nil {
				return err
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			// The bindings of the entity's own row are kept, unless the
			// tool is given --allow or --deny now.
			row, confirm := trustAudit(db, e.Entity)
			err = db.UpdateTrust(context.Background(), e.Entity, func(cur chain.TrustEntry, from string) (chain.TrustEntry, error) {
				if from == e.Entity {
					for t, p := range cur.Perms {
						if _, given := e.Perms[t]; p == chain.PermBind && !given {
							e.Perms[t] = p
						}
					}
				}
				return e, nil
			}, confirm)
			row.done(err)
			if store.IsValidation(err) {
				return usageError("%v", err)
			}
			if err != nil {
				return runtimeError("writing the trust registry: %v", err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"entity_id": e.Entity, "trust_level": e.Level, "permissions": e.Perms})
			}
			a, d := permLists(e.Perms)
			fmt.Fprintf(cmd.OutOrStdout(), "%s: level %d (%s); allow: %s; deny: %s; bound: %s\n", e.Entity, e.Level, levelMeaning[e.Level], orDash(a), orDash(d),
				orDash(boundTools(e.Perms)))
			return nil
		},
	}
	// StringArray, not StringSlice: a slice flag reads its value as one CSV
	// record, so a newline silently dropped every name after it (--deny
	// $'bash\nwrite_file' denied only bash). parseTrustArgs splits commas.
	cmd.Flags().StringArrayVar(&allow, "allow", nil, "a tool the entity may call whatever its level (repeatable, or comma-separated)")
	cmd.Flags().StringArrayVar(&deny, "deny", nil, "a tool the entity may not call (repeatable, or comma-separated)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print the row as {"entity_id", "trust_level", "permissions"} (as trust list does)`)
	return cmd
}

// parseTrustArgs validates everything before anything is opened or written.
func parseTrustArgs(entity, level string, allow, deny []string) (chain.TrustEntry, error) {
	e := chain.TrustEntry{Entity: entity, Perms: map[string]string{}}
	if err := chain.ValidateEntity(entity); err != nil {
		return e, usageError("%v", err)
	}
	n, err := strconv.Atoi(level)
	if err != nil || n < 0 || n > 3 {
		return e, usageError("unknown trust level %q: use 0 (nothing), 1 (read tools), 2 (adds write_file and bash) or 3 (adds upstream tools)", level)
	}
	e.Level = n
	for _, list := range []struct {
		tools []string
		perm  string
	}{{allow, chain.PermAllow}, {deny, chain.PermDeny}} {
		var tools []string
		for _, v := range list.tools {
			tools = append(tools, strings.Split(v, ",")...)
		}
		for _, t := range tools {
			if err := chain.ValidatePermKey(t); err != nil {
				return e, usageError("--%s: %v", list.perm, err)
			}
			// Names match exactly, and no upstream tool may take a
			// built-in's name in another case: --deny Bash would deny
			// nothing while bash stays allowed.
			for _, b := range builtin.Names() {
				if t != b && strings.EqualFold(t, b) {
					return e, usageError("--%s %s: the built-in tool is called %s (tool names are case-sensitive)", list.perm, t, b)
				}
			}
			if p, dup := e.Perms[t]; dup && p != list.perm {
				return e, usageError("tool %s is given both --allow and --deny; choose one", t)
			}
			e.Perms[t] = list.perm
		}
	}
	return e, nil
}

func newTrustRmCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rm ENTITY",
		Short: "Remove an entity's row (its calls are then refused, unless a KIND:* row matches)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("trust rm needs one ENTITY (got %d argument(s))\nusage: clawd trust rm ENTITY [--json]", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := chain.ValidateEntity(args[0]); err != nil {
				return usageError("%v", err)
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			row, confirm := trustAudit(db, args[0])
			ok, err := db.RemoveTrust(context.Background(), args[0], confirm)
			row.done(err)
			if err != nil {
				return runtimeError("writing the trust registry: %v", err)
			}
			if !ok {
				return runtimeError("no trust registry row for %s; 'clawd trust list' shows the rows", args[0])
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"entity_id": args[0], "removed": true})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"entity_id", "removed"}`)
	return cmd
}

// noArgs rejects positional arguments with the command's usage line.
func noArgs(usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError("unexpected argument %q\nusage: %s", args[0], usage)
		}
		return nil
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return runtimeError("%v", err)
	}
	return nil
}
