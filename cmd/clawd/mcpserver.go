package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/safetext"
)

// The commands on stored MCP servers work on the database directly,
// daemon or not. STATUS, LAST ERROR, LAST CONNECTED and the tools cache are
// what a daemon recorded last; without a running daemon they are history.

func newMCPListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List MCP servers: transport, status, tool count, last error, last connected",
		Args:  noArgs("clawd mcp list [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			list, err := db.MCPServers(context.Background())
			if err != nil {
				return runtimeError("reading the MCP servers: %v", err)
			}
			if asJSON {
				views := make([]store.MCPServerView, 0, len(list))
				for _, s := range list {
					views = append(views, s.View())
				}
				return writeJSON(cmd.OutOrStdout(), views)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTRANSPORT\tENABLED\tSTATUS\tTOOLS\tLAST CONNECTED\tLAST ERROR")
			for _, s := range list {
				v := s.View()
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", v.Name, v.Transport, yesNo(v.Enabled), v.LastStatus, v.ToolCount,
					orNone(v.LastConnectedAt), orNone(oneLine(v.LastError, 60)))
			}
			tw.Flush()
			if len(list) <= 1 {
				fmt.Fprintln(cmd.OutOrStdout(), "\nNo upstream servers yet: add one with 'clawd mcp add NAME --stdio -- COMMAND [ARGS...]' or 'clawd mcp add NAME --http URL'.")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newMCPShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one MCP server's configuration (secrets masked) and status",
		Args:  exactArgs(1, "the server's NAME", "clawd mcp show NAME [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, s, err := lookupServer(args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			ap, err := serverApproval(db, s)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), withApproval(s, ap))
			}
			printServer(cmd.OutOrStdout(), s)
			printApproval(cmd.OutOrStdout(), ap)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// checkName refuses a NAME no server can have (exit 2).
func checkName(name string) error {
	if err := store.ValidateServerName(name); err != nil {
		return usageError("%v", err)
	}
	return nil
}

// lookupServer validates NAME, opens the store and finds the row; the
// caller closes the store.
func lookupServer(name string) (*store.DB, store.MCPServer, error) {
	if err := checkName(name); err != nil {
		return nil, store.MCPServer{}, err
	}
	db, err := openStore()
	if err != nil {
		return nil, store.MCPServer{}, err
	}
	s, err := db.MCPServerByName(context.Background(), name)
	if err != nil {
		db.Close()
		return nil, s, mcpStoreError(err, "reading "+name)
	}
	return db, s, nil
}

// printServer writes a row's every field, masked, one per line. The
// command line is shown whole and shell-quoted: what is stored is what
// will run.
func printServer(w io.Writer, s store.MCPServer) {
	v := s.View()
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	line := func(k, val string) {
		if k != "" {
			k += ":"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", k, val)
	}
	line("name", v.Name)
	line("id", fmt.Sprint(v.ID))
	if v.Description != "" {
		line("description", oneLine(v.Description, 0))
	}
	line("transport", transportText(v.Transport))
	switch v.Transport {
	case store.TransportStdio:
		line("command", shellJoin(append([]string{v.Command}, v.Args...)))
		line("cwd", orNone(oneLine(v.Cwd, 0)))
		for i, kv := range pairsText(v.Env, "=") {
			line(ifFirst(i, "env"), kv)
		}
	case store.TransportHTTP, store.TransportSSE:
		line("url", oneLine(v.URL, 0))
		for i, kv := range pairsText(v.Headers, ": ") {
			line(ifFirst(i, "headers"), kv)
		}
	}
	if !v.Builtin {
		line("timeouts", fmt.Sprintf("connect %d s, read %d s", v.ConnectTimeoutSeconds, v.ReadTimeoutSeconds))
		line("identity", identityText(s))
	}
	line("enabled", yesNo(v.Enabled))
	line("status", v.LastStatus)
	line("last error", orNone(oneLine(v.LastError, 0)))
	line("last connected", orNone(v.LastConnectedAt))
	line("tools", fmt.Sprintf("%d ('clawd mcp tools %s' lists them)", v.ToolCount, v.Name))
	line("created", v.CreatedAt)
	line("updated", v.UpdatedAt)
	tw.Flush()
}

func transportText(t string) string {
	switch t {
	case store.TransportHTTP:
		return "http (Streamable HTTP)"
	case store.TransportSSE:
		return "sse (legacy HTTP+SSE)"
	case store.TransportBuiltin:
		return "builtin (clawd's own tools, in process)"
	}
	return t
}

// pairsText is "K=V" lines sorted by name, or "-" for none.
func pairsText(m map[string]string, sep string) []string {
	if len(m) == 0 {
		return []string{"-"}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = oneLine(k+sep+m[k], 0)
	}
	return out
}

func ifFirst(i int, k string) string {
	if i == 0 {
		return k
	}
	return ""
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine makes text that came from the database (an upstream's error,
// tool names and descriptions) safe for a terminal on one line: control and
// other non-printable characters (escape sequences, newlines, bidi
// overrides) and invalid UTF-8 become \x.. or \u.... escapes, and it is cut
// to max runes (0: no cut) with "...".
func oneLine(s string, max int) string { return terminalEscape(s, false, max) }

// terminalSafe escapes what an upstream could use to drive the terminal,
// as oneLine does, but keeps newlines and tabs: a server's stderr is the
// server's to choose.
func terminalSafe(s string) string { return terminalEscape(s, true, 0) }

func terminalEscape(s string, keepLines bool, max int) string {
	var b strings.Builder
	n := 0
	for i, r := range s {
		if max > 0 && n == max {
			b.WriteString("...")
			break
		}
		n++
		switch {
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"): // invalid UTF-8, not U+FFFD itself
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		case safetext.Forbidden(r) || (!unicode.IsPrint(r) && r != ' '): // variation selectors, tags, fillers: printable, invisible
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func newMCPRmCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove an upstream MCP server and its tools cache",
		Args:  exactArgs(1, "the server's NAME", "clawd mcp rm NAME [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, s, err := lookupServer(args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			row := auditCLI(db, "mcp:"+s.Name, chain.ResultAllow, "")
			err = db.DeleteServer(context.Background(), s.ID, row.server(func(store.MCPServer, store.MCPServer) string {
				return "configure: removed"
			}))
			row.done(err)
			if err != nil {
				return mcpStoreError(err, "removing "+s.Name)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"removed": true, "server": s})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed MCP server %s (%s) and its %d cached tool(s)\n", s.Name, s.Transport, s.ToolCount)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newMCPEnableCmd(enable bool) *cobra.Command {
	verb, short := "enable", "Enable an MCP server (clawd connects to it)"
	if !enable {
		verb, short = "disable", "Disable an MCP server without removing it (clawd disconnects, its tools are hidden)"
	}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Args:  exactArgs(1, "the server's NAME", "clawd mcp "+verb+" NAME [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, s, err := lookupServer(args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			row := auditCLI(db, "mcp:"+s.Name, chain.ResultAllow, "")
			changed, err := db.SetServerEnabled(context.Background(), s.ID, enable, row.server(func(store.MCPServer, store.MCPServer) string {
				return "configure: " + verb + "d"
			}))
			row.done(err)
			if err != nil {
				return mcpStoreError(err, verb+" "+s.Name)
			}
			if s, err = db.MCPServer(context.Background(), s.ID); err != nil {
				return mcpStoreError(err, "reading "+args[0])
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"changed": changed, "server": s})
			}
			if changed {
				fmt.Fprintf(cmd.OutOrStdout(), "%sd MCP server %s\n", verb, s.Name)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "MCP server %s was already %sd\n", s.Name, verb)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// mcpToolJSON is one tool of `clawd mcp tools --json`: the upstream's own
// name (clawd exposes it as SERVER__TOOL, shortened with a hash where a
// client's limit requires).
type mcpToolJSON struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	LastSeenAt  string          `json:"last_seen_at,omitempty"`
	// Approval is the state of an upstream tool's definition: approved
	// (offered), new or changed (hidden until clawd mcp approve), or
	// unknown (the daemon has not recorded it); built-in for clawd's own.
	Approval string `json:"approval"`
}

func newMCPToolsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools [NAME]",
		Short: "List the tools of one or every MCP server, from the cache of the last tools/list",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("unexpected argument %q: mcp tools takes at most one NAME\nusage: clawd mcp tools [NAME] [--json]", args[1])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := mcpTools(args)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), list)
			}
			if len(list) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "No cached tools for %s: the cache is filled when clawd connects to the server.\n", args[0])
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SERVER\tTOOL\tAPPROVAL\tLAST SEEN\tDESCRIPTION")
			for _, t := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Server, oneLine(t.Name, 0), t.Approval, orNone(t.LastSeenAt), oneLine(firstLine(t.Description), 70))
			}
			tw.Flush()
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// mcpTools reads the cache of one server (args[0]) or of all. The built-in
// server's tools are compiled in, so they come from the binary, not the
// cache.
func mcpTools(args []string) ([]mcpToolJSON, error) {
	var db *store.DB
	var only store.MCPServer
	var err error
	if len(args) == 1 {
		if db, only, err = lookupServer(args[0]); err != nil {
			return nil, err
		}
	} else if db, err = openStore(); err != nil {
		return nil, err
	}
	defer db.Close()
	out := []mcpToolJSON{}
	if len(args) == 0 || only.Builtin {
		for _, t := range builtin.Builtin(&builtin.Env{}).Tools() {
			sp := t.Spec()
			out = append(out, mcpToolJSON{Server: store.BuiltinServerName, Name: sp.Name, Description: sp.Description, InputSchema: json.RawMessage(sp.InputSchema), Approval: "built-in"})
		}
		if only.Builtin {
			return out, nil
		}
	}
	cached, err := db.MCPTools(context.Background(), only.ID)
	if err != nil {
		return nil, runtimeError("reading the tools cache: %v", err)
	}
	approvals, err := mcpApprovalStates(db, only.ID)
	if err != nil {
		return nil, err
	}
	for _, t := range cached {
		st, ok := approvals[[2]string{t.Server, t.Name}]
		if !ok {
			st = "unknown"
		}
		out = append(out, mcpToolJSON{Server: t.Server, Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, LastSeenAt: t.LastSeenAt, Approval: st})
	}
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
