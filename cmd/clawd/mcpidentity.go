package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// identityFlags are the identity forwarding options of `mcp add` and `mcp set`.
type identityFlags struct {
	mode, arg, audience string
}

func (f *identityFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "identity", "off", "forward the calling entity to the server: off, meta (its id as text) or signed (a JWT signed by clawd)")
	fl.StringVar(&f.arg, "identity-arg", "", "the reserved tool argument that carries it (default "+identity.DefaultUserArg+", signed: "+identity.DefaultTokenArg+"; '' restores the default)")
	fl.StringVar(&f.audience, "identity-audience", "", "with --identity signed: the tokens' aud (default the server's name; '' restores it)")
}

// patch is the part of f the command line set, validated; a usage error
// names the flag.
func (f *identityFlags) patch(cmd *cobra.Command) (store.MCPServerPatch, error) {
	var p store.MCPServerPatch
	fl := cmd.Flags()
	if fl.Changed("identity") {
		m, err := identity.ParseMode(f.mode)
		if err != nil {
			return p, usageError("--identity: %v", err)
		}
		mode := string(m)
		p.IdentityMode = &mode
	}
	if fl.Changed("identity-arg") {
		if err := (identity.Config{Arg: f.arg}).Validate(); err != nil {
			return p, usageError("--identity-arg: %v", err)
		}
		p.IdentityArg = &f.arg
	}
	if fl.Changed("identity-audience") {
		if err := (identity.Config{Audience: f.audience}).Validate(); err != nil {
			return p, usageError("--identity-audience: %v", err)
		}
		p.IdentityAudience = &f.audience
	}
	return p, nil
}

// apply sets the flags given on a new row.
func (f *identityFlags) apply(cmd *cobra.Command, s *store.MCPServer) error {
	p, err := f.patch(cmd)
	if err != nil {
		return err
	}
	if p.IdentityMode != nil {
		s.IdentityMode = *p.IdentityMode
	}
	if p.IdentityArg != nil {
		s.IdentityArg = *p.IdentityArg
	}
	if p.IdentityAudience != nil {
		s.IdentityAudience = *p.IdentityAudience
	}
	if s.IdentityMode != store.IdentitySigned && s.IdentityAudience != "" {
		return usageError("--identity-audience is the audience of signed tokens: add --identity signed, or leave it out")
	}
	return nil
}

// signingKeyNote makes sure the workspace of the current directory has a
// signing key once a server is in signed mode, and says where it is and
// how servers get the public key. Other workspaces' daemons sign with their
// own key: `clawd mcp identity-key --workspace DIR` creates and prints it.
func signingKeyNote(w io.Writer, s store.MCPServer) error {
	if s.IdentityMode != store.IdentitySigned {
		return nil
	}
	k, created, path, ws, err := workspaceKey("")
	if err != nil {
		return runtimeError("server %s is stored in signed mode, but its signing key is not usable, so its calls are refused until it is: %v", s.Name, err)
	}
	verb := "uses"
	if created {
		verb = "created"
	}
	fmt.Fprintf(w, "signed identity: workspace %s %s the signing key %s (kid %s, issuer %s).\n"+
		"Give the server's verifier the public key: clawd mcp identity-key (PEM) or clawd mcp identity-key --jwks.\n",
		ws, verb, path, k.KID, identity.Issuer(ws))
	return nil
}

// workspaceKey loads, or creates, the signing key of the workspace at dir
// ("" for the current directory).
func workspaceKey(dir string) (k *identity.Key, created bool, path, wsID string, err error) {
	ws, err := runstate.ResolveWorkspace(runstate.Options{Workspace: dir})
	if err != nil {
		return nil, false, "", "", err
	}
	p, err := config.DefaultPaths()
	if err != nil {
		return nil, false, "", "", err
	}
	path = identity.KeyPath(p.DataDir, ws.ID)
	k, created, err = identity.EnsureKey(path)
	return k, created, path, ws.ID, err
}

func newMCPSetCmd() *cobra.Command {
	var (
		f      identityFlags
		asJSON bool
	)
	const usage = "clawd mcp set NAME [--identity off|meta|signed] [--identity-arg NAME] [--identity-audience AUD] [--json]"
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Change an MCP server's identity forwarding (who is calling, sent with each call)",
		Long: "Change what clawd tells server NAME about the caller of each tool call (docs/upstreams.md):\n" +
			"  --identity off      nothing (the default); reserved arguments a model supplies are removed\n" +
			"  --identity meta     the caller's entity id (e.g. cc:myproject-1a2b3c4d), in _meta clawd/identity and\n" +
			"                      in the reserved argument (--identity-arg, default " + identity.DefaultUserArg + ")\n" +
			"  --identity signed   a 60 s EdDSA JWT (sub = the entity, aud = --identity-audience or NAME) signed\n" +
			"                      with the workspace's key, in _meta and in the argument (default " + identity.DefaultTokenArg + ")\n" +
			"A running daemon applies the change to the next call, without reconnecting.",
		Args: exactArgs(1, "the server's NAME", usage),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := f.patch(cmd)
			if err != nil {
				return err
			}
			if p.IdentityMode == nil && p.IdentityArg == nil && p.IdentityAudience == nil {
				return usageError("mcp set needs at least one of --identity, --identity-arg, --identity-audience\nusage: %s", usage)
			}
			db, s, err := lookupServer(args[0])
			if err != nil {
				return err
			}
			defer db.Close()
			mode := s.IdentityMode
			if p.IdentityMode != nil {
				mode = *p.IdentityMode
			}
			if p.IdentityAudience != nil && *p.IdentityAudience != "" && mode != store.IdentitySigned {
				return usageError("--identity-audience is the audience of signed tokens, and %s is in mode %s: add --identity signed", s.Name, mode)
			}
			row := auditCLI(db, "mcp:"+s.Name, chain.ResultAllow, "")
			got, err := db.UpdateServer(context.Background(), s.ID, p, row.server(func(before, after store.MCPServer) string {
				if identityText(before) == identityText(after) {
					return "configure: nothing changed"
				}
				return "configure: identity " + identityText(after) + " (was " + identityText(before) + ")"
			}))
			row.done(err)
			if err != nil {
				return mcpStoreError(err, "changing "+s.Name)
			}
			if err := signingKeyNote(cmd.ErrOrStderr(), got); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), got)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: identity %s\n", got.Name, identityText(got))
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stored server as JSON")
	return cmd
}

// identityText describes a row's identity setting in one line.
func identityText(s store.MCPServer) string {
	c := identity.Config{Mode: identity.Mode(s.IdentityMode), Arg: s.IdentityArg, Audience: s.IdentityAudience}
	switch c.Mode {
	case identity.ModeMeta:
		return fmt.Sprintf("meta (the caller's entity id in _meta %s and argument %s)", identity.MetaKey, c.ArgName())
	case identity.ModeSigned:
		return fmt.Sprintf("signed (a JWT for audience %s in _meta %s and argument %s)", c.AudienceFor(s.Name), identity.MetaKey, c.ArgName())
	}
	return "off (nothing forwarded; " + identity.DefaultUserArg + " and " + identity.DefaultTokenArg + " are removed from arguments)"
}

func newMCPIdentityKeyCmd() *cobra.Command {
	var (
		jwks, asJSON bool
		workspace    string
	)
	cmd := &cobra.Command{
		Use:   "identity-key",
		Short: "Print the public key servers use to verify signed identities (PEM, or --jwks)",
		Long: "Print the public half of the workspace's identity signing key, which servers in --identity signed\n" +
			"mode use to verify clawd's tokens: PEM by default, a JWKS document with --jwks. The key is created\n" +
			"on first use, in clawd's data directory (mode 0600); its private half is never printed. Each\n" +
			"workspace has its own key and issuer (urn:clawd:workspace:ID): --workspace DIR picks one.",
		Args: noArgs("clawd mcp identity-key [--jwks] [--workspace DIR] [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, created, path, ws, err := workspaceKey(workspace)
			if err != nil {
				return runtimeError("the identity signing key: %v", err)
			}
			if created {
				fmt.Fprintf(cmd.ErrOrStderr(), "created the identity signing key %s\n", path)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{
					"workspace": ws, "issuer": identity.Issuer(ws), "kid": k.KID, "key_file": path,
					"public_key_pem": string(k.PublicPEM()), "jwks": rawJSON(k.JWKS()), "created": created,
				})
			}
			if jwks {
				_, err := cmd.OutOrStdout().Write(k.JWKS())
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "issuer %s, kid %s, alg EdDSA\n", identity.Issuer(ws), k.KID)
			_, err = cmd.OutOrStdout().Write(k.PublicPEM())
			return err
		},
	}
	cmd.Flags().BoolVar(&jwks, "jwks", false, "print a JWKS document instead of PEM")
	cmd.Flags().StringVar(&workspace, "workspace", "", "the workspace whose key to print (default: the current directory's)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the workspace, issuer, kid, key file, PEM and JWKS as JSON")
	return cmd
}

type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(strings.TrimSpace(string(r))), nil }
