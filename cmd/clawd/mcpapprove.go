package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/safetext"
)

// The definition members `mcp diff` compares, in the order it shows them
// (the members clawd pins, see internal/upstream/definition.go).
var diffMembers = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}

func newMCPApproveCmd() *cobra.Command {
	var asJSON, yes bool
	var sum string
	cmd := &cobra.Command{
		Use:   "approve NAME [TOOL]",
		Short: "Approve the current definition of a server's new or changed tools, so clawd offers them",
		Long:  mcpApproveLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || len(args) > 2 {
				return usageError("mcp approve takes the server's NAME and optionally one TOOL\nusage: clawd mcp approve NAME [TOOL] [--sha256 HEX | --yes] [--json]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := approveRequest(args, sum)
			if err != nil {
				return err
			}
			db, s, err := lookupServer(args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			req.Server = s.Name
			var got []store.ToolApproval
			rows := &approvalRows{db: db, server: s.Name}
			if req.SHA256 == "" && !yes {
				review := cmd.OutOrStdout()
				if asJSON {
					review = cmd.ErrOrStderr() // stdout stays one JSON document
				}
				got, err = approveReviewed(db, s, req, newApproval(false, review), rows)
			} else {
				got, err = db.ApproveTools(context.Background(), req, time.Now(), rows.confirm)
				rows.done(err)
				if err != nil {
					err = mcpStoreError(err, "approving")
				}
			}
			if err != nil {
				return err // one transaction: nothing was approved
			}
			return printApproved(cmd, s.Name, got, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&sum, "sha256", "", "approve only if the tool's current definition has this SHA-256 (from clawd mcp diff)")
	cmd.Flags().BoolVar(&yes, "yes", false, "approve the definitions as they are now without showing them or asking (scripts)")
	return cmd
}

const mcpApproveLong = "An upstream tool is offered to clients only while its definition (name, title, description,\n" +
	"input and output schema, annotations) is the one you approved. A new tool, or one whose\n" +
	"definition changed, is hidden and its calls are refused until you approve it here; see what\n" +
	"changed first with clawd mcp diff NAME. Without TOOL, every tool the server lists now is\n" +
	"approved. TOOL is the exposed name (NAME__tool) or the server's own. --sha256 (from mcp diff)\n" +
	"approves only that exact definition, so one that changed since you looked is refused.\n\n" +
	"Without --sha256, approve shows the definitions it would approve (as mcp diff does) and asks on\n" +
	"a terminal; a yes approves exactly those, and one that changed meanwhile is refused. With no\n" +
	"terminal to ask on it approves nothing unless --yes says to take the definitions as they are now.\n" +
	"A running daemon offers approved tools within about a second (docs/upstreams.md)."

// approveRequest is the approval NAME [TOOL] and --sha256 ask for, or a
// usage error.
func approveRequest(args []string, sum string) (store.ApproveRequest, error) {
	req := store.ApproveRequest{By: "local:cli"}
	if len(args) == 2 {
		req.Tool = args[1]
	}
	if sum != "" {
		if err := store.ValidateSHA256(strings.ToLower(sum)); err != nil {
			return req, usageError("--sha256: %v", err)
		}
		if req.Tool == "" {
			return req, usageError("--sha256 approves one definition: name the TOOL too\nusage: clawd mcp approve NAME TOOL --sha256 HEX")
		}
		req.SHA256 = strings.ToLower(sum)
	}
	return req, nil
}

// printApproved reports the definitions approved, one line each or as
// JSON.
func printApproved(cmd *cobra.Command, server string, got []store.ToolApproval, asJSON bool) error {
	type approvedJSON struct {
		Tool    string `json:"tool"`
		Exposed string `json:"exposed"`
		SHA256  string `json:"sha256"`
	}
	out := []approvedJSON{}
	for _, a := range got {
		out = append(out, approvedJSON{Tool: safetext.Line(a.Tool), Exposed: a.Exposed, SHA256: a.ApprovedSHA256})
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), map[string]any{"server": server, "approved": out})
	}
	if len(out) == 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "Nothing to approve: the tools of %s are approved as they are.\n", server)
		return nil
	}
	for _, a := range out {
		fmt.Fprintf(cmd.OutOrStdout(), "approved %s (sha256 %s)\n", orNone(a.Exposed), a.SHA256)
	}
	return nil
}

// approveReviewed is `mcp approve NAME [TOOL]` without --sha256 or --yes:
// it shows the definitions it would approve and, on a yes, approves each
// by the hash shown, so a definition that changed between the question
// and the answer (or since a `clawd mcp diff` the user read) is refused,
// not approved unseen: all of them in one transaction, or none. With no
// terminal it approves nothing: an answer piped in by a script is not a
// review. When there is nothing pending it approves nothing (a definition
// seen meanwhile waits for the next review); an unknown tool, or no tools
// seen yet, gets the store's answer.
func approveReviewed(db *store.DB, s store.MCPServer, req store.ApproveRequest, a approval, rows *approvalRows) ([]store.ToolApproval, error) {
	pending, err := db.PendingApprovals(context.Background(), s.Name, req.Tool)
	if err != nil {
		return nil, mcpStoreError(err, "approving")
	}
	if len(pending) == 0 {
		return nil, nil
	}
	if a.in == nil {
		return nil, usageError("%d tool definition(s) of %s would be approved unseen, and there is no terminal to show them and ask: "+
			"review them with clawd mcp diff %s, then approve what you read with clawd mcp approve %s TOOL --sha256 HEX, "+
			"or pass --yes to approve them as they are now", len(pending), s.Name, s.Name, s.Name)
	}
	diffs := make([]toolDiff, len(pending))
	for i, p := range pending {
		diffs[i] = diffOf(p)
	}
	printDiffs(a.out, s.Name, diffs)
	if !a.confirm(fmt.Sprintf("\nApprove these %d definition(s) of %s? [y/N] ", len(pending), s.Name)) {
		return nil, runtimeError("nothing was approved")
	}
	reviewed := make([]store.ReviewedDefinition, len(pending))
	for i, p := range pending {
		reviewed[i] = store.ReviewedDefinition{Tool: p.Tool, SHA256: p.SeenSHA256}
	}
	got, err := db.ApproveTools(context.Background(), store.ApproveRequest{Server: s.Name, Reviewed: reviewed, By: req.By}, time.Now(), rows.confirm)
	rows.done(err)
	if err != nil {
		return nil, mcpStoreError(err, "approving")
	}
	return got, nil
}

// approvalRows writes one row per approved definition (the caller is the
// CLI: local:cli) inside ApproveTools' transaction: a row that cannot be
// written rolls every approval back (cliRow).
type approvalRows struct {
	db     *store.DB
	server string
	rows   []*cliRow
}

func (a *approvalRows) confirm(got []store.ToolApproval) error {
	for _, t := range got {
		was := "new tool"
		if t.PreviousSHA256 != "" {
			was = "was " + t.PreviousSHA256
		}
		r := auditCLI(a.db, "mcp:"+a.server+"/"+safetext.Line(t.Tool), chain.ResultAllow,
			"approve: sha256 "+t.ApprovedSHA256+" ("+was+")")
		if err := r.confirm(); err != nil {
			return err
		}
		a.rows = append(a.rows, r)
	}
	return nil
}

// done records the outcome on every row written.
func (a *approvalRows) done(err error) {
	for _, r := range a.rows {
		r.done(err)
	}
	a.rows = nil
}

// toolDiff is what `mcp diff` reports for one tool.
type toolDiff struct {
	Tool           string        `json:"tool"`
	Exposed        string        `json:"exposed"`
	State          string        `json:"state"`
	Present        bool          `json:"present"`
	ApprovedSHA256 string        `json:"approved_sha256,omitempty"`
	ApprovedAt     string        `json:"approved_at,omitempty"`
	SeenSHA256     string        `json:"seen_sha256"`
	SeenAt         string        `json:"seen_at"`
	Changes        []fieldChange `json:"changes"`
}

// fieldChange is one member (or one leaf inside a schema or the
// annotations, as a JSON pointer) that differs. Old and New are shown as
// JSON with every invisible or control character written as an escape, so
// a change hidden in such characters is visible; "" means absent.
type fieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old,omitempty"`
	New   string `json:"new,omitempty"`
	// Hidden is set when old and new look the same once escapes and
	// invisible characters are removed: the change is only in those.
	Hidden bool `json:"hidden_only,omitempty"`
}

func newMCPDiffCmd() *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "diff NAME [TOOL]",
		Short: "Show how a server's new or changed tool definitions differ from the approved ones",
		Long: "For each tool of NAME that is not approved (or only TOOL, or with --all every tool): its\n" +
			"state (new, changed), the SHA-256 approved and the one seen now, and per field what changed.\n" +
			"Schema and annotation changes are shown per leaf (annotations/destructiveHint: false -> true).\n" +
			"Values are JSON with escapes and invisible characters written out (\\u001b, \\u202e; text\n" +
			"spelled in invisible tag characters as [hidden tag text: \"...\"]), so nothing in them can act\n" +
			"on your terminal or hide from you.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || len(args) > 2 {
				return usageError("mcp diff takes the server's NAME and optionally one TOOL\nusage: clawd mcp diff NAME [TOOL] [--all] [--json]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			db, s, err := lookupServer(args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			if s.Builtin {
				return usageError("%s is clawd's own tools: they are compiled in and need no approval", s.Name)
			}
			list, err := db.ToolApprovals(context.Background(), s.ID)
			if err != nil {
				return runtimeError("reading the tool definitions: %v", err)
			}
			out := []toolDiff{}
			found := false
			for _, a := range list {
				if len(args) == 2 {
					if a.Tool != args[1] && a.Exposed != args[1] {
						continue
					}
				} else if !all && (a.State() == store.DefinitionApproved || !a.Present) {
					continue
				}
				found = true
				out = append(out, diffOf(a))
			}
			if len(args) == 2 && !found {
				return runtimeError("%s has no tool %q; clawd mcp tools %s lists them", s.Name, oneLine(args[1], 80), s.Name)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"server": s.Name, "tools": out})
			}
			if len(list) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "clawd has not seen the tools of %s yet: they are recorded when clawd serve connects to it.\n", s.Name)
				return nil
			}
			if len(out) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "Every tool of %s is approved as it is.\n", s.Name)
				return nil
			}
			printDiffs(cmd.OutOrStdout(), s.Name, out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&all, "all", false, "also list the approved tools and those no longer listed")
	return cmd
}

func diffOf(a store.ToolApproval) toolDiff {
	d := toolDiff{Tool: visible(a.Tool), Exposed: a.Exposed, State: a.State(), Present: a.Present,
		ApprovedSHA256: a.ApprovedSHA256, ApprovedAt: a.ApprovedAt, SeenSHA256: a.SeenSHA256, SeenAt: a.SeenAt}
	d.Changes = definitionDiff(a.ApprovedDef, a.SeenDef)
	if d.Changes == nil {
		d.Changes = []fieldChange{}
	}
	return d
}

func printDiffs(w io.Writer, server string, list []toolDiff) {
	for i, d := range list {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s (upstream name %s): %s", orNone(d.Exposed), d.Tool, d.State)
		if !d.Present {
			fmt.Fprint(w, ", no longer listed")
		}
		fmt.Fprintln(w)
		if d.ApprovedSHA256 != "" {
			fmt.Fprintf(w, "  approved  sha256 %s  %s\n", d.ApprovedSHA256, d.ApprovedAt)
		}
		fmt.Fprintf(w, "  now       sha256 %s  %s\n", d.SeenSHA256, d.SeenAt)
		for _, c := range d.Changes {
			switch {
			case c.Old == "":
				fmt.Fprintf(w, "  + %s: %s\n", c.Field, c.New)
			case c.New == "":
				fmt.Fprintf(w, "  - %s: %s\n", c.Field, c.Old)
			default:
				fmt.Fprintf(w, "  ~ %s:\n      was: %s\n      now: %s\n", c.Field, c.Old, c.New)
			}
			if c.Hidden {
				fmt.Fprintln(w, "      (the change is only in escapes or invisible characters, which clawd strips before showing)")
			}
		}
		if d.State != store.DefinitionApproved {
			fmt.Fprintf(w, "  approve: clawd mcp approve %s %s --sha256 %s\n", server, orNone(d.Exposed), d.SeenSHA256)
		}
	}
}

// definitionDiff compares two canonical definitions member by member; in
// objects (schemas, annotations) leaf by leaf. old may be nil (a new tool:
// every member is an addition).
func definitionDiff(old, cur json.RawMessage) []fieldChange {
	var a, b map[string]json.RawMessage
	if len(old) > 0 {
		json.Unmarshal(old, &a)
	}
	json.Unmarshal(cur, &b)
	var out []fieldChange
	for _, m := range diffMembers {
		out = appendLeafDiff(out, m, a[m], b[m])
	}
	return out
}

// appendLeafDiff adds the differences between x and y at path: objects are
// compared per member (sorted), anything else as a whole.
func appendLeafDiff(out []fieldChange, path string, x, y json.RawMessage) []fieldChange {
	if bytes.Equal(x, y) {
		return out
	}
	var ox, oy map[string]json.RawMessage
	if isObject(x) && isObject(y) && json.Unmarshal(x, &ox) == nil && json.Unmarshal(y, &oy) == nil {
		keys := map[string]bool{}
		for k := range ox {
			keys[k] = true
		}
		for k := range oy {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			out = appendLeafDiff(out, path+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), ox[k], oy[k])
		}
		return out
	}
	c := fieldChange{Field: visible(path), Old: visible(string(x)), New: visible(string(y))}
	c.Hidden = len(x) > 0 && len(y) > 0 && safetext.Clean(unescapeJSON(x)) == safetext.Clean(unescapeJSON(y))
	return append(out, c)
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// unescapeJSON is a JSON string's text (other values as they are).
func unescapeJSON(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// visible writes every control, format or other invisible character of s
// as an escape (\u001b, \u202e) and invalid UTF-8 as \x..: what a
// reviewer reads is every character there is. A run of Unicode tag
// characters, which spell ASCII invisibly, is decoded and shown as
// [hidden tag text: "..."].
func visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= 0xE0000 && r <= 0xE007F {
			var hidden strings.Builder
			for i < len(s) {
				r, n = utf8.DecodeRuneInString(s[i:])
				if r < 0xE0000 || r > 0xE007F {
					break
				}
				hidden.WriteRune(r - 0xE0000)
				i += n
			}
			fmt.Fprintf(&b, "[hidden tag text: %s]", strconv.QuoteToASCII(hidden.String()))
			continue
		}
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case safetext.Forbidden(r) || (!unicode.IsPrint(r) && r != ' '):
			if r > 0xffff {
				fmt.Fprintf(&b, "\\U%08x", r)
			} else {
				fmt.Fprintf(&b, "\\u%04x", r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// mcpApprovalStates is each listed tool's definition state by server and
// exposed name (the name the tools cache keeps).
func mcpApprovalStates(db *store.DB, serverID int64) (map[[2]string]string, error) {
	list, err := db.ToolApprovals(context.Background(), serverID)
	if err != nil {
		return nil, runtimeError("reading the tool definitions: %v", err)
	}
	out := make(map[[2]string]string, len(list))
	for _, a := range list {
		if a.Present && a.Exposed != "" {
			out[[2]string{a.Server, a.Exposed}] = a.State()
		}
	}
	return out, nil
}
