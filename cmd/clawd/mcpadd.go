package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/netguard"
	"github.com/clawde/clawd/internal/support/safetext"
	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/upstream"
)

const mcpAddUsage = "clawd mcp add NAME --stdio [--cwd DIR] [--env K=V]... [--allow] -- COMMAND [ARGS...]\n" +
	"       clawd mcp add NAME --http URL [--sse] [--header 'K: V']... [--allow [--private]]"

type mcpAddFlags struct {
	stdio, sse, disabled, asJSON bool
	allow                        bool // approve now: a stdio server's command, an http server's origin
	private                      bool // --http --allow: the origin may reach private and link-local addresses
	httpURL, cwd, description    string
	env, headers                 []string
	connect, read                int
	identity                     identityFlags
}

func newMCPAddCmd() *cobra.Command {
	var f mcpAddFlags
	cmd := &cobra.Command{
		Use:   "add NAME (--stdio -- COMMAND [ARGS...] | --http URL)",
		Short: "Add an upstream MCP server (stdio, Streamable HTTP or legacy SSE)",
		Long:  mcpAddLong,
		Args:  func(cmd *cobra.Command, args []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.server(cmd, args)
			if err != nil {
				return err
			}
			p, err := f.plan(cmd.ErrOrStderr(), s)
			if err != nil {
				return err
			}
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			row := auditCLI(db, "mcp:"+s.Name, chain.ResultAllow, "")
			got, err := db.InsertServer(context.Background(), s, row.server(func(_, after store.MCPServer) string {
				return "configure: added " + after.AddedSummary()
			}))
			row.done(err)
			if err != nil {
				return mcpStoreError(err, "adding "+s.Name)
			}
			return f.report(cmd, db, got, p)
		},
	}
	f.register(cmd)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return mcpAddFlagError(c, err, cmdLine(c))
	})
	return cmd
}

const mcpAddLong = "Add an upstream MCP server whose tools clawd offers as NAME__TOOL.\n\n" +
	"  clawd mcp add fs --stdio -- npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /home/me/src\n" +
	"  clawd mcp add gh --stdio --env GITHUB_TOKEN='${GITHUB_TOKEN}' -- github-mcp-server stdio\n" +
	"  clawd mcp add remote --http https://mcp.example.com/mcp --header 'Authorization: Bearer ${API_TOKEN}'\n\n" +
	"NAME: 1-128 letters, digits, '-' or '_', starting with a letter or digit, without '__' and not\n" +
	"ending in '_'. A ${VAR} or $VAR in an --env or --header value is stored unresolved and read from\n" +
	"clawd's environment when the server starts (quote it so your shell does not expand it; write $$\n" +
	"for a literal '$'); any other value is stored in clawd's database (mode 0600) and always shown\n" +
	"masked. Arguments are stored and shown as given: pass secrets through --env.\n\n" +
	"A stdio server starts only once approved: add shows the exact command and what it pins (the\n" +
	"executable's SHA-256; a node/python/... script's SHA-256; an npx package's version and integrity),\n" +
	"then asks on a terminal, approves with --allow, or prints the 'clawd mcp allow' line that would.\n" +
	"docs/upstreams.md has the details."

// register defines add's flags on cmd.
func (f *mcpAddFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.stdio, "stdio", false, "the server is a local command, given after --")
	fl.StringVar(&f.httpURL, "http", "", "the server's Streamable HTTP endpoint (http or https URL)")
	fl.BoolVar(&f.sse, "sse", false, "with --http: the server speaks the legacy HTTP+SSE transport")
	fl.StringVar(&f.cwd, "cwd", "", "with --stdio: the command's working directory")
	fl.StringArrayVar(&f.env, "env", nil, "with --stdio: K=V or K='${VAR}' in the command's environment (repeatable)")
	fl.StringArrayVar(&f.headers, "header", nil, "with --http: 'K: V' sent with every request (repeatable)")
	fl.IntVar(&f.connect, "connect-timeout", store.DefaultConnectTimeout, "seconds to connect and initialize (5-300)")
	fl.IntVar(&f.read, "read-timeout", store.DefaultReadTimeout, "seconds to wait for any one answer (5-300)")
	fl.BoolVar(&f.allow, "allow", false, "approve now without asking: with --stdio what the command runs (else asked on a terminal), with --http the URL's origin (clawd egress allow)")
	fl.BoolVar(&f.private, "private", false, "with --allow: the origin may reach private and link-local addresses")
	fl.BoolVar(&f.disabled, "disabled", false, "store the server without connecting to it (clawd mcp enable NAME later)")
	fl.StringVar(&f.description, "description", "", "a note shown by 'clawd mcp show'")
	f.identity.register(cmd)
	fl.BoolVar(&f.asJSON, "json", false, "print the stored server as JSON")
}

// mcpAddFlagError is a flag error as a usage error, with the hint that a
// stdio server's command goes after -- when an unknown flag was probably
// meant for that command: args, the command line, has no --.
func mcpAddFlagError(c *cobra.Command, err error, args []string) error {
	msg := flagProblem(c, err)
	if strings.Contains(msg, "unknown") && !slices.Contains(args, "--") {
		msg += "\nA stdio server's command and its arguments go after --: clawd mcp add NAME --stdio -- COMMAND [ARGS...]"
	}
	return usageError("%s\nusage: %s", msg, mcpAddUsage)
}

// mcpAddPlan is what add settled before it writes the row: whether the
// server is remote and its origin, and for a stdio server approved with
// --allow, the launch that was checked.
type mcpAddPlan struct {
	remote   bool
	origin   netguard.Origin
	resolved *upstream.Launch
}

// plan checks, before anything is stored, what --private and --allow ask
// for, and warns on w about what is legal but likely a mistake.
func (f *mcpAddFlags) plan(w io.Writer, s store.MCPServer) (mcpAddPlan, error) {
	p := mcpAddPlan{remote: s.Transport == store.TransportHTTP || s.Transport == store.TransportSSE}
	if f.private && !p.remote {
		return p, usageError("--private is for --http servers: it lets their origin reach private and link-local addresses\nusage: %s", mcpAddUsage)
	}
	origin, err := checkAddEgress(s.URL, f.allow, f.private)
	if p.remote && err != nil {
		return p, err
	}
	p.origin = origin
	warnAdd(w, s)
	if f.allow && !p.remote {
		// --allow promises an approved server: one that cannot be
		// approved is not stored.
		l, err := upstream.Inspect(daemon.UpstreamConfigs([]store.MCPServer{s})[0])
		if err != nil {
			return p, runtimeError("%s cannot be approved, so it was not added: %v", s.Name, err)
		}
		if l.Unpinned != "" {
			return p, usageError("%s cannot be approved, so it was not added: %s", s.Name, l.Unpinned)
		}
		p.resolved = &l
	}
	return p, nil
}

// report prints the stored server (or, with --json, writes it last), then
// approves a stdio server's command or an http server's origin, or says
// how to.
func (f *mcpAddFlags) report(cmd *cobra.Command, db *store.DB, got store.MCPServer, p mcpAddPlan) error {
	if err := signingKeyNote(cmd.ErrOrStderr(), got); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.asJSON {
		out = cmd.ErrOrStderr() // stdout stays one JSON document
	} else {
		fmt.Fprintf(out, "added MCP server %s (id %d)\n", got.Name, got.ID)
		printServer(out, got)
	}
	if got.Transport == store.TransportStdio {
		a := newApproval(f.allow, out)
		a.resolved = p.resolved // approve what was checked, not a second resolution
		if _, _, err := approveServer(db, got, a); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s\nThe server is stored but will not start until its command can be approved; change it with 'clawd mcp rm %s' and add again.\n", terminalSafe(err.Error()), got.Name)
		}
	}
	var egressErr error
	if p.remote {
		egressErr = proposeEgress(out, db, p.origin, f.allow, f.private)
	}
	if f.asJSON {
		if err := writeJSON(cmd.OutOrStdout(), got); err != nil {
			return err
		}
	}
	if egressErr != nil {
		return egressErr
	}
	return nil
}

// server turns the command line into a row, or a usage error naming what
// is wrong. The store validates the row again when it is written.
func (f *mcpAddFlags) server(cmd *cobra.Command, args []string) (store.MCPServer, error) {
	var s store.MCPServer
	dash := cmd.ArgsLenAtDash()
	name, rest := "", args
	if len(args) > 0 && dash != 0 {
		name, rest = args[0], args[1:]
	}
	if name == "" {
		return s, usageError("mcp add needs a NAME before the options\nusage: %s", mcpAddUsage)
	}
	if err := checkName(name); err != nil {
		return s, err
	}
	if dash > 1 {
		return s, usageError("unexpected argument %q before --: mcp add takes one NAME\nusage: %s", args[1], mcpAddUsage)
	}
	httpSet := cmd.Flags().Changed("http")
	switch {
	case f.stdio && httpSet:
		return s, usageError("choose one of --stdio and --http\nusage: %s", mcpAddUsage)
	case !f.stdio && !httpSet:
		hint := ""
		if len(rest) > 0 && strings.Contains(rest[0], "://") {
			hint = fmt.Sprintf(" (for a URL: --http %s; --sse takes no value)", rest[0])
		}
		return s, usageError("mcp add %s needs --stdio or --http%s\nusage: %s", name, hint, mcpAddUsage)
	}
	for _, fl := range []struct {
		name string
		bad  bool
		for_ string
	}{
		{"cwd", f.cwd != "", "--stdio"}, {"env", len(f.env) > 0, "--stdio"},
		{"sse", f.sse, "--http"}, {"header", len(f.headers) > 0, "--http"},
	} {
		if fl.bad && (fl.for_ == "--stdio") != f.stdio {
			return s, usageError("--%s is for %s servers", fl.name, fl.for_)
		}
	}
	for _, t := range []struct {
		flag string
		v    int
	}{{"connect-timeout", f.connect}, {"read-timeout", f.read}} {
		if err := store.ValidateTimeout("--"+t.flag, t.v); err != nil {
			return s, usageError("%v", err)
		}
	}
	var err error
	if f.stdio {
		s, err = f.stdioServer(name, dash, rest)
	} else {
		s, err = f.httpServer(name, rest)
	}
	if err != nil {
		return s, err
	}
	s.ConnectTimeoutSeconds, s.ReadTimeoutSeconds = f.connect, f.read
	s.Enabled = !f.disabled
	s.Description = f.description
	return s, f.identity.apply(cmd, &s)
}

// stdioServer reads COMMAND [ARGS...] after --, --cwd and --env.
func (f *mcpAddFlags) stdioServer(name string, dash int, rest []string) (store.MCPServer, error) {
	var s store.MCPServer
	if dash < 0 {
		if len(rest) > 0 {
			return s, usageError("put the command after --: clawd mcp add %s --stdio -- %s", name, shellJoin(rest))
		}
		return s, usageError("--stdio needs the command after --: clawd mcp add %s --stdio -- COMMAND [ARGS...]", name)
	}
	if len(rest) == 0 || strings.TrimSpace(rest[0]) == "" {
		return s, usageError("--stdio needs a command after --: clawd mcp add %s --stdio -- COMMAND [ARGS...]", name)
	}
	s = store.NewStdioServer(name, rest[0], rest[1:])
	if f.cwd != "" {
		dir, err := checkCwd(f.cwd)
		if err != nil {
			return s, err
		}
		s.Cwd = dir
	}
	env, err := parsePairs(f.env, "env", "=")
	s.Env = env
	return s, err
}

// httpServer reads --http URL, --sse and --header.
func (f *mcpAddFlags) httpServer(name string, rest []string) (store.MCPServer, error) {
	if len(rest) > 0 {
		return store.MCPServer{}, usageError("unexpected argument %q: an --http server takes no command\nusage: %s", rest[0], mcpAddUsage)
	}
	transport := store.TransportHTTP
	if f.sse {
		transport = store.TransportSSE
	}
	s := store.NewHTTPServer(name, transport, f.httpURL)
	if err := store.ValidateURL(f.httpURL); err != nil {
		return s, usageError("--http: %v", err)
	}
	h, err := parsePairs(f.headers, "header", ":")
	s.Headers = h
	return s, err
}

// checkCwd makes --cwd absolute (the daemon starting the server runs
// elsewhere) and requires an existing directory.
func checkCwd(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageError("--cwd %q: %v", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", usageError("--cwd %s: no such directory; create it or give an existing one", shellWord(abs))
	}
	if !st.IsDir() {
		return "", usageError("--cwd %s is not a directory", shellWord(abs))
	}
	return abs, nil
}

// parsePairs reads --env K=V (sep "=") or --header 'K: V' (sep ":",
// spaces around the value trimmed) into a map, refusing a name given
// twice.
func parsePairs(list []string, flag, sep string) (store.SecretMap, error) {
	example := "K=V (or K='${VAR}' to read VAR from clawd's environment at start)"
	if flag == "header" {
		example = "'Name: value', e.g. 'Authorization: Bearer ${API_TOKEN}'"
	}
	out := store.SecretMap{}
	seen := map[string]string{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, sep)
		if flag == "header" {
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		}
		if !ok || k == "" {
			return nil, usageError("--%s %q: expected %s", flag, secrets.MaskText(kv), example)
		}
		key := k
		if flag == "header" {
			key = strings.ToLower(k)
		}
		if prev, dup := seen[key]; dup {
			return nil, usageError("--%s %s is given twice (also as %s); give it once", flag, k, prev)
		}
		seen[key] = k
		out[k] = v
	}
	var err error
	if flag == "header" {
		err = store.ValidateHeaders(out)
	} else {
		err = store.ValidateEnv(out)
	}
	if err != nil {
		return nil, usageError("--%s: %v", flag, err)
	}
	return out, nil
}

// warnAdd notes on stderr what is legal but likely a mistake: an argument
// that looks like a secret (arguments are shown unmasked), a ${VAR} not set
// in this shell (it is read from clawd's environment, which may differ).
func warnAdd(w io.Writer, s store.MCPServer) {
	for i, a := range s.Args {
		if secrets.MaskText(a) != a {
			fmt.Fprintf(w, "clawd: warning: argument %d looks like a secret; arguments are stored and shown as given. Pass secrets as --env NAME='${VAR}' instead.\n", i+1)
		}
	}
	var unset []string
	for _, m := range []store.SecretMap{s.Env, s.Headers} {
		for _, v := range m {
			for _, ref := range secrets.Refs(v) {
				if _, ok := os.LookupEnv(ref); !ok && !slices.Contains(unset, ref) {
					unset = append(unset, ref)
				}
			}
		}
	}
	sort.Strings(unset)
	if len(unset) > 0 {
		fmt.Fprintf(w, "clawd: note: %s not set in this shell; it is read from the environment of the clawd daemon when the server starts.\n", strings.Join(unset, ", "))
	}
}

// mcpStoreError maps the store's errors to exit codes: malformed input and
// the built-in row (which no command may change) are usage errors (2);
// what the stored state refuses (a taken name, a missing server or tool,
// a definition that changed since it was reviewed) and anything else are
// runtime errors (1).
func mcpStoreError(err error, doing string) error {
	switch {
	case store.IsRefusedByState(err):
		return runtimeError("%v", err)
	case store.IsValidation(err):
		return usageError("%v", err)
	case errors.Is(err, store.ErrServerExists):
		return runtimeError("%v; 'clawd mcp list' shows the servers, 'clawd mcp rm NAME' removes one", err)
	case errors.Is(err, store.ErrBuiltinServer):
		return usageError("%s is the built-in server (clawd's own tools); it cannot be removed, disabled or changed", store.BuiltinServerName)
	case errors.Is(err, store.ErrServerNotFound):
		return runtimeError("%v; 'clawd mcp list' shows the servers", err)
	}
	return runtimeError("%s: %v", doing, err)
}

// shellJoin writes a command line a POSIX shell reads back as exactly
// these words (upstream.QuoteCommand: control characters shown as $'\x..').
func shellJoin(words []string) string { return upstream.QuoteCommand(words) }

// shellWord shows one path or name the user gave as a shell word: as it
// is when plain, quoted otherwise, and always on one line.
func shellWord(w string) string { return safetext.ShellWord(w) }
