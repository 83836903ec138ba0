package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
)

const (
	trustBindUsage   = "clawd trust bind ENTITY TOOL... [--json]"
	trustUnbindUsage = "clawd trust unbind ENTITY [TOOL...] [--json]"
)

func newTrustBindCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "bind ENTITY TOOL...",
		Short: "Bind upstream tools to an entity: it then lists and calls exactly those upstream tools",
		Long:  trustBindLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError("trust bind needs ENTITY and at least one TOOL (got %d argument(s))\nusage: %s", len(args), trustBindUsage)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			entity, tools := args[0], dedupe(args[1:])
			if err := checkBindArgs(entity, tools); err != nil {
				return err
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			checked, err := checkBindings(db, tools)
			if err != nil {
				return err
			}
			from, replaced, err := bindTools(db, entity, tools)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"entity": entity, "bound": checked, "row_created_from": createdFrom(entity, from)})
			}
			printBind(cmd.OutOrStdout(), entity, from, checked, replaced)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was bound, with each tool's status, as JSON")
	return cmd
}

const trustBindLong = "Bind upstream tools to ENTITY. Once an entity has a binding, its bound upstream tools are the only\n" +
	"upstream tools tools/list shows it and the only ones it may call, whatever its level (a binding also\n" +
	"grants a tool below level 3); clawd's own tools still follow its level. TOOL is an exposed name\n" +
	"(SERVER__TOOL, as 'clawd mcp tools' shows it) or SERVER__* for every tool of a server. An exact\n" +
	"--deny in the row still wins.\n\n" +
	"Each tool is checked when saved: connected (the server lists it), stale (the server is offline;\n" +
	"known from its last tool list) and unavailable (the server is disabled or cannot run) are saved;\n" +
	"orphan (no such server or tool) is refused with the fix, and nothing is saved.\n\n" +
	"If ENTITY has no row of its own, one is created from the KIND:* row that applies to it now (same\n" +
	"level and permissions), so binding narrows what the entity gets and never widens it otherwise.\n\n" +
	"Example: clawd trust bind cc:myproject-1a2b3c4d github__list_issues fs__*"

// checkBindArgs refuses, as usage errors, an invalid entity or tool and
// clawd's own tools, which are not bound.
func checkBindArgs(entity string, tools []string) error {
	if err := chain.ValidateEntity(entity); err != nil {
		return usageError("%v", err)
	}
	builtins := builtin.Names()
	for _, t := range tools {
		if err := chain.ValidatePermKey(t); err != nil {
			return usageError("%v", err)
		}
		if slices.Contains(builtins, t) {
			return usageError("%s is one of clawd's own tools: bindings are for upstream tools; its level decides, or 'clawd trust set %s LEVEL --allow %s'", t, entity, t)
		}
	}
	return nil
}

// checkBindings is each tool's status; an orphan among them refuses the
// whole bind, naming every orphan.
func checkBindings(db *store.DB, tools []string) ([]store.BindingStatus, error) {
	checked := make([]store.BindingStatus, 0, len(tools))
	var orphans []string
	for _, t := range tools {
		b, err := db.CheckBinding(context.Background(), t)
		if err != nil {
			return nil, runtimeError("checking %s: %v", t, err)
		}
		checked = append(checked, b)
		if b.Status == store.BindOrphan {
			orphans = append(orphans, fmt.Sprintf("  %s: orphan: %s", t, b.Detail))
		}
	}
	if len(orphans) > 0 {
		return nil, runtimeError("nothing was bound: %d tool(s) do not exist\n%s", len(orphans), strings.Join(orphans, "\n"))
	}
	return checked, nil
}

// bindTools binds tools to entity in its trust row, made from the KIND:*
// row that applies (from) when entity has none of its own. replaced are
// the tools whose --allow or --deny a binding took the place of.
func bindTools(db *store.DB, entity string, tools []string) (from string, replaced []string, err error) {
	row, confirm := trustAudit(db, entity)
	defer func() { row.done(err) }()
	err = db.UpdateTrust(context.Background(), entity, func(cur chain.TrustEntry, f string) (chain.TrustEntry, error) {
		if f == "" {
			return cur, fmt.Errorf("%w for %s", store.ErrNoTrustRow, entity)
		}
		from = f
		next := chain.TrustEntry{Level: cur.Level, Perms: map[string]string{}}
		for k, v := range cur.Perms {
			next.Perms[k] = v
		}
		for _, t := range tools {
			if p, ok := next.Perms[t]; ok && p != chain.PermBind {
				replaced = append(replaced, t+" (was "+p+")")
			}
			next.Perms[t] = chain.PermBind
		}
		return next, nil
	}, confirm)
	if errors.Is(err, store.ErrNoTrustRow) {
		return "", nil, runtimeError("%s has no trust registry row, so it may call nothing; add one first (clawd trust set %s LEVEL), then bind", entity, entity)
	}
	if err != nil {
		return "", nil, runtimeError("writing the trust registry: %v", err)
	}
	return from, replaced, nil
}

func printBind(w io.Writer, entity, from string, checked []store.BindingStatus, replaced []string) {
	if from != entity {
		fmt.Fprintf(w, "created a row for %s from %s (its level and permissions)\n", entity, from)
	}
	for _, b := range checked {
		fmt.Fprintf(w, "bound %s to %s: %s (%s)\n", b.Tool, entity, b.Status, b.Detail)
	}
	if len(replaced) > 0 {
		fmt.Fprintf(w, "replaced the earlier --allow/--deny of: %s\n", strings.Join(replaced, ", "))
	}
}

func createdFrom(entity, from string) string {
	if from == entity {
		return ""
	}
	return from
}

func newTrustUnbindCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "unbind ENTITY [TOOL...]",
		Short: "Remove bindings (all of them without TOOL); without bindings the entity's level decides again",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usageError("trust unbind needs ENTITY\nusage: %s", trustUnbindUsage)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			entity, tools := args[0], dedupe(args[1:])
			if err := chain.ValidateEntity(entity); err != nil {
				return usageError("%v", err)
			}
			for _, t := range tools {
				if err := chain.ValidatePermKey(t); err != nil {
					return usageError("%v", err)
				}
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			var removed, left []string
			errNotBound := errors.New("not bound")
			row, confirm := trustAudit(db, entity)
			err = db.UpdateTrust(context.Background(), entity, func(cur chain.TrustEntry, from string) (chain.TrustEntry, error) {
				if from != entity {
					return cur, errNotBound
				}
				next := chain.TrustEntry{Level: cur.Level, Perms: map[string]string{}}
				for k, v := range cur.Perms {
					next.Perms[k] = v
				}
				bound := boundTools(cur.Perms)
				var missing []string
				for _, t := range tools {
					if next.Perms[t] != chain.PermBind {
						missing = append(missing, t)
					}
				}
				if len(missing) > 0 {
					return cur, &missingBindings{missing: missing, bound: bound}
				}
				if len(tools) == 0 {
					tools = bound
				}
				for _, t := range tools {
					delete(next.Perms, t)
					removed = append(removed, t)
				}
				left = boundTools(next.Perms)
				return next, nil
			}, confirm)
			row.done(err)
			var mb *missingBindings
			switch {
			case errors.Is(err, errNotBound):
				return runtimeError("%s has no row of its own, so nothing is bound to it; 'clawd trust list' shows the rows", entity)
			case errors.As(err, &mb):
				return runtimeError("nothing was unbound: %s not bound to %s (bound: %s)", strings.Join(mb.missing, ", "), entity, orDash(mb.bound))
			case err != nil:
				return runtimeError("writing the trust registry: %v", err)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"entity": entity, "unbound": nonNil(removed), "still_bound": nonNil(left)})
			}
			printUnbind(cmd.OutOrStdout(), entity, removed, left)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was unbound as JSON")
	return cmd
}

type missingBindings struct{ missing, bound []string }

func (m *missingBindings) Error() string { return "not bound: " + strings.Join(m.missing, ", ") }

func printUnbind(w io.Writer, entity string, removed, left []string) {
	if len(removed) == 0 {
		fmt.Fprintf(w, "%s had no bindings\n", entity)
		return
	}
	fmt.Fprintf(w, "unbound from %s: %s\n", entity, strings.Join(removed, ", "))
	if len(left) == 0 {
		fmt.Fprintf(w, "%s has no bindings now: its level decides which upstream tools it gets\n", entity)
	} else {
		fmt.Fprintf(w, "still bound: %s\n", strings.Join(left, ", "))
	}
}

// boundTools lists a row's bindings, sorted.
func boundTools(perms map[string]string) []string {
	var out []string
	for t, p := range perms {
		if p == chain.PermBind {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
