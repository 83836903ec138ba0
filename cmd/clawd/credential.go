package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/token"
)

// Per-client credentials: `clawd token issue|list|revoke`. A credential maps
// a connection to one entity kind (cc, oc, local) on the unix socket and over
// HTTP, where what a client calls itself must not decide its trust
// (docs/security.md).

func newTokenIssueCmd() *cobra.Command {
	var f clientFlags
	var kind, label string
	var noSave bool
	cmd := &cobra.Command{
		Use:   "issue --client KIND",
		Short: "Issue a per-client credential that maps a connection to entity kind KIND",
		Long: "Issue a credential for this workspace that makes a connection entity KIND:<workspace> (cc, oc or\n" +
			"local), whatever the client calls itself. It is printed once; clawd keeps only its SHA-256.\n" +
			"Unless --no-save, it is also written to the token file's path plus '.KIND' (mode 0600), where\n" +
			"'clawd connect --client KIND' and 'clawd token show --client KIND' read it. Present it as\n" +
			"'Authorization: Bearer <credential>' over HTTP. 'clawd token revoke ID' ends it at once.\n\n" +
			"A credential separates cooperating clients of one user; it does not protect against a program\n" +
			"running as that user, which can read the file (docs/security.md).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !config.IsClientKind(kind) {
				return usageError("--client %q: use one of %s", kind, strings.Join(config.ClientKinds, ", "))
			}
			ws, err := runstate.ResolveWorkspace(f.options())
			if err != nil {
				return runtimeError("%v", err)
			}
			id, text, path, err := issueCredential(ws, kind, label, !noSave)
			if err != nil {
				return err
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"id": id, "kind": kind, "workspace_id": ws.ID,
					"entity": kind + ":" + ws.ID, "credential": text, "file": path})
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, text)
			msg := fmt.Sprintf("clawd: issued credential %s for entity %s:%s (shown once", id, kind, ws.ID)
			if path != "" {
				msg += "; saved to " + shellWord(path)
			}
			cmd.PrintErrln(msg + ")")
			return nil
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&kind, "client", "", "entity kind the credential maps to: cc, oc or local (required)")
	fl.StringVar(&label, "label", "", "a note shown by clawd token list (e.g. which client holds it)")
	fl.BoolVar(&noSave, "no-save", false, "print the credential only; do not write the credential file")
	return cmd
}

func newTokenListCmd() *cobra.Command {
	var f clientFlags
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the per-client credentials of this workspace (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			wsID := ""
			if !all {
				ws, err := runstate.ResolveWorkspace(f.options())
				if err != nil {
					return runtimeError("%v", err)
				}
				wsID = ws.ID
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			creds, err := db.Credentials(context.Background(), wsID)
			if err != nil {
				return runtimeError("reading credentials: %v", err)
			}
			if f.json {
				if creds == nil {
					creds = []store.Credential{}
				}
				return writeJSON(cmd.OutOrStdout(), creds)
			}
			if len(creds) == 0 {
				cmd.PrintErrln("clawd: no per-client credentials; issue one with clawd token issue --client KIND")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tENTITY\tSTATUS\tCREATED\tLABEL")
			for _, c := range creds {
				status := "active"
				if c.RevokedAt != nil {
					status = "revoked " + *c.RevokedAt
				}
				fmt.Fprintf(tw, "%s\t%s:%s\t%s\t%s\t%s\n", c.ID, c.Kind, c.WorkspaceID, status, c.CreatedAt, oneLine(c.Label, 0))
			}
			return tw.Flush()
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "list the credentials of every workspace")
	return cmd
}

func newTokenRevokeCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a per-client credential: every daemon refuses it from its next request on",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] == "" {
				return usageError("token revoke needs exactly one credential id (clawd token list shows them)\nusage: clawd token revoke ID")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			row := credentialAudit(db, args[0], chain.ResultDeny)
			c, err := db.RevokeCredential(context.Background(), args[0], func(c store.Credential) error {
				row.reason = "configure: revoked the " + c.Kind + " credential of workspace " + c.WorkspaceID + labelNote(c.Label)
				return row.confirm()
			})
			row.done(err)
			if errors.Is(err, store.ErrNoCredential) {
				return runtimeError("no credential %q; clawd token list --all shows them", args[0])
			}
			if err != nil {
				return runtimeError("revoking %s: %v", args[0], err)
			}
			// Remove the saved copy if it holds this credential.
			if ws, err := runstate.ResolveWorkspace(f.options()); err == nil && ws.ID == c.WorkspaceID {
				path := token.CredentialPath(ws.TokenPath, c.Kind)
				if cur, err := token.ReadFile(path); err == nil {
					if id, _, ok := token.ParseClientCredential(cur); ok && id == c.ID {
						os.Remove(path)
					}
				}
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), c)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked: credential %s (%s:%s) is refused from now on\n", c.ID, c.Kind, c.WorkspaceID)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

// issueCredential stores a new credential of kind for ws and, when save is
// set, writes it to the credential file (0600) that clients read it from.
// It returns the credential's id, its text and the file ("" unless saved).
func issueCredential(ws *runstate.Workspace, kind, label string, save bool) (id, text, path string, err error) {
	db, err := openStore()
	if err != nil {
		return "", "", "", err
	}
	defer db.Close()
	id, digest, text := token.NewClientCredential()
	c := store.Credential{ID: id, WorkspaceID: ws.ID, Kind: kind, Label: label}
	row := credentialAudit(db, id, chain.ResultAllow)
	row.reason = "configure: issued a " + kind + " credential for workspace " + ws.ID + labelNote(label)
	err = db.AddCredential(context.Background(), c, digest, row.confirm)
	row.done(err)
	if store.IsValidation(err) {
		return "", "", "", usageError("%v", err)
	} else if err != nil {
		return "", "", "", runtimeError("storing the credential: %v", err)
	}
	if !save {
		return id, text, "", nil
	}
	path = token.CredentialPath(ws.TokenPath, kind)
	if err := fileutil.MkdirPrivate(filepath.Dir(path)); err != nil {
		return "", "", "", runtimeError("credential file directory: %v", err)
	}
	if err := fileutil.WriteAtomic(path, []byte(text+"\n"), 0o600); err != nil {
		return "", "", "", runtimeError("writing the credential file %s: %v (the credential %s is stored; revoke it with clawd token revoke %s)", shellWord(path), err, id, id)
	}
	return id, text, path, nil
}

// readCredentialFile reads the saved credential of a kind for a workspace.
func readCredentialFile(ws *runstate.Workspace, kind string) (string, error) {
	path := token.CredentialPath(ws.TokenPath, kind)
	text, err := token.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no %s credential for %s at %s; issue one with: clawd token issue --client %s --workspace %s", kind, shellWord(ws.Dir), shellWord(path), kind, shellWord(ws.Dir))
	}
	if err != nil {
		return "", err
	}
	if _, _, ok := token.ParseClientCredential(text); !ok {
		return "", fmt.Errorf("%s does not hold a clawd credential; issue a new one with clawd token issue --client %s", shellWord(path), kind)
	}
	return text, nil
}

// credentialAudit is the audit row of issuing or revoking a per-client
// credential: entity local:cli, tool "credential:ID", step auth, written
// inside the change's transaction (no row, no change). A credential is who
// a client is, at its kind's trust level: an agent that issues itself a
// cc credential through bash is on record with the id its calls carry.
func credentialAudit(db *store.DB, id, result string) *cliRow {
	r := auditCLI(db, "credential:"+id, result, "")
	r.step = chain.StepAuth
	return r
}

// labelNote is a credential's label for its audit row ("" for none).
func labelNote(label string) string {
	if label == "" {
		return ""
	}
	return " (label " + strconv.Quote(label) + ")"
}
