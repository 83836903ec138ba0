package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/cli/hostadapter"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/support/safetext"
	"github.com/clawde/clawd/internal/support/token"
)

// `clawd install CLIENT` / `clawd uninstall CLIENT`: write clawd's entry
// into an MCP client's own config file and take it out again
// (docs/clients.md).

type installFlags struct {
	workspace, configFile, transport, command string
	project, user, dryRun, hook               bool
}

func (f *installFlags) register(cmd *cobra.Command, install bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.workspace, "workspace", "", "workspace (project) directory (default: the current directory)")
	fl.StringVar(&f.configFile, "config", "", "clawd config file (default: $XDG_CONFIG_HOME/clawde/mcp-server.toml)")
	fl.BoolVar(&f.project, "project", false, "the project's config file (default in a git checkout or where the client's project file exists)")
	fl.BoolVar(&f.user, "user", false, "the user's config file, for every project")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the diff and change nothing")
	if install {
		fl.StringVar(&f.transport, "transport", hostadapter.Stdio, "how the client reaches clawd: stdio (clawd per session), unix_socket (clawd connect to the workspace daemon) or tcp_loopback (HTTP)")
		fl.StringVar(&f.command, "command", "", "how the entry runs clawd (default: \"clawd\" when it is on PATH, else this binary's absolute path)")
		fl.BoolVar(&f.hook, "hook", false, "claude-code: also install the SessionStart hook that starts or checks the workspace daemon")
	}
}

func newInstallCmd() *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "install CLIENT",
		Short: "Add clawd to an MCP client's config: " + strings.Join(hostadapter.Names(), ", "),
		Long: "Write clawd's entry into the client's own config file, merged with what is there: other servers,\n" +
			"comments and formatting stay; the original is kept once as <file>.clawd-backup. Running it again\n" +
			"changes nothing; 'clawd uninstall CLIENT' takes out exactly the entry.\n\n" +
			"Socket and HTTP entries use the per-client credential of the client's kind (cc for claude-code,\n" +
			"oc for opencode, local otherwise), issued now if this workspace has none, and read it each time\n" +
			"they connect, so rotation never breaks them. docs/clients.md shows each client's file and entry.",
		Args: exactClient,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, o, unlock, err := f.begin(args[0], true)
			if err != nil {
				return err
			}
			defer unlock()
			ch, err := hostadapter.PlanInstall(a, o)
			if err != nil {
				return runtimeError("%v", err)
			}
			changes := []hostadapter.Change{ch}
			if a.Name() == "claude-code" && o.Scope == hostadapter.Project {
				ac, err := hostadapter.PlanApprove(o)
				if err != nil {
					return runtimeError("%v", err)
				}
				changes = append(changes, ac)
			}
			if f.hook {
				hc, err := hostadapter.PlanHookInstall(o)
				if err != nil {
					return runtimeError("%v", err)
				}
				changes = append(changes, hc...)
			}
			if o.Transport != hostadapter.Stdio {
				if err := ensureCredential(cmd, &f, a.Kind(), o.CredentialFile, f.dryRun); err != nil {
					return err
				}
			}
			return applyChanges(cmd, changes, f.dryRun, "installed clawd ("+o.Transport+") for "+a.Name()+" in")
		},
	}
	f.register(cmd, true)
	return cmd
}

func newUninstallCmd() *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "uninstall CLIENT",
		Short: "Take clawd's entry (and hook) out of an MCP client's config",
		Long: "Remove the clawd entry that 'clawd install CLIENT' wrote. When nothing else in the file changed\n" +
			"since, the original bytes come back from <file>.clawd-backup (and a file install created is\n" +
			"deleted); otherwise only the entry goes. The claude-code SessionStart hook goes too. Credentials\n" +
			"stay: 'clawd token list' and 'clawd token revoke ID' manage them.",
		Args: exactClient,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, o, unlock, err := f.begin(args[0], false)
			if err != nil {
				return err
			}
			defer unlock()
			e, err := a.Entry(o)
			if err != nil {
				return runtimeError("%v", err)
			}
			root := ""
			if o.Scope == hostadapter.Project {
				root = o.Workspace
			}
			ch, err := hostadapter.PlanUninstall(e.File, e.Path, root)
			if err != nil {
				return runtimeError("%v", err)
			}
			changes := []hostadapter.Change{ch}
			if a.Name() == "claude-code" && o.Scope == hostadapter.Project {
				ac, err := hostadapter.PlanUnapprove(o)
				if err != nil {
					return runtimeError("%v", err)
				}
				changes = append(changes, ac)
			}
			if a.Name() == "claude-code" {
				hc, err := hostadapter.PlanHookUninstall(o)
				if err != nil {
					return runtimeError("%v", err)
				}
				changes = append(changes, hc...)
			}
			return applyChanges(cmd, changes, f.dryRun, "removed clawd from")
		},
	}
	f.register(cmd, false)
	return cmd
}

// begin is how install and uninstall start: the client and its options
// from the flags, then the install lock, which the caller releases with
// unlock once the files are written.
func (f *installFlags) begin(name string, install bool) (hostadapter.Adapter, hostadapter.Options, func(), error) {
	a, o, err := f.resolve(name, install)
	if err != nil {
		return nil, o, nil, err
	}
	unlock, err := lockInstall(f.dryRun)
	if err != nil {
		return nil, o, nil, err
	}
	return a, o, unlock, nil
}

// lockInstall takes the per-user lock (hostadapter.Lock, in clawd's data
// directory) that an install or uninstall holds from reading the client's
// files until it has written them; a dry run writes nothing and takes none.
func lockInstall(dryRun bool) (func(), error) {
	if dryRun {
		return func() {}, nil
	}
	p, err := config.DefaultPaths()
	if err != nil {
		return nil, runtimeError("%v", err)
	}
	unlock, err := hostadapter.Lock(p.DataDir)
	if err != nil {
		return nil, runtimeError("%v", err)
	}
	return unlock, nil
}

func exactClient(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError("%s needs one client: %s", cmd.Name(), strings.Join(hostadapter.Names(), ", "))
	}
	return nil
}

// resolve checks the flags and builds the adapter's options.
func (f *installFlags) resolve(name string, install bool) (hostadapter.Adapter, hostadapter.Options, error) {
	var o hostadapter.Options
	a, err := hostadapter.Lookup(name)
	if err != nil {
		return nil, o, usageError("%v", err)
	}
	if f.project && f.user {
		return nil, o, usageError("--project and --user exclude each other: pick the file to change")
	}
	switch f.transport {
	case hostadapter.Stdio, hostadapter.UnixSocket, hostadapter.TCPLoopback:
	case "":
		f.transport = hostadapter.Stdio
	default:
		return nil, o, usageError("--transport %q: use stdio, unix_socket or tcp_loopback", f.transport)
	}
	if f.hook && a.Name() != "claude-code" {
		return nil, o, usageError("--hook is for claude-code only (its SessionStart hook)")
	}
	ws, err := runstate.ResolveWorkspace(runstate.Options{Workspace: f.workspace, ConfigFile: f.configFile, Port: -1})
	if err != nil {
		return nil, o, runtimeError("%v", err)
	}
	o.Workspace, o.Transport = ws.Dir, f.transport
	if o.Home, err = os.UserHomeDir(); err != nil {
		return nil, o, runtimeError("no home directory: %v", err)
	}
	if o.ConfigDir, err = os.UserConfigDir(); err != nil {
		return nil, o, runtimeError("no user config directory: %v", err)
	}
	o.XDGConfig = hostadapter.XDGConfigHome(o.Home)
	o.ClaudeConfigDir = hostadapter.ClaudeConfigDir()
	scopes := a.Scopes()
	switch {
	case f.project && scopes[0] != hostadapter.Project:
		return nil, o, usageError("%s has no project config; it reads only the user's (drop --project)", a.Name())
	case f.project:
		o.Scope = hostadapter.Project
	case f.user || scopes[0] == hostadapter.User:
		o.Scope = hostadapter.User
	case fileExistsAt(filepath.Join(ws.Dir, ".git")) || fileExistsAt(a.ProjectMarker(ws.Dir)):
		o.Scope = hostadapter.Project
	default:
		marker, _ := filepath.Rel(ws.Dir, a.ProjectMarker(ws.Dir))
		return nil, o, usageError("%s is not a project (no .git, no %s): pass --project to write %[2]s there, or --user", shellWord(ws.Dir), marker)
	}
	o.Command = f.command
	if o.Command == "" {
		o.Command = clawdCommand()
	}
	o.CredentialFile = token.CredentialPath(ws.TokenPath, a.Kind())
	// A transport the client cannot use is a command line that cannot
	// work whatever is stored, as --hook for another client is.
	if install {
		if _, err := a.Entry(o); err != nil {
			return nil, o, usageError("%v", err)
		}
	}
	if install && o.Transport == hostadapter.TCPLoopback {
		if ws.Config.Port == 0 {
			return nil, o, runtimeError("the config's port = 0 picks a free port at each start, which an HTTP entry cannot follow; set a fixed port or use --transport unix_socket")
		}
		o.URL = "http://" + httpEntryAddr(ws) + "/mcp"
	}
	f.workspace = ws.Dir
	return a, o, nil
}

// clawdCommand is "clawd" when that is on PATH (portable entries a project
// can commit), else the absolute path of this binary.
func clawdCommand() string {
	if _, err := exec.LookPath("clawd"); err == nil {
		return "clawd"
	}
	if exe, err := os.Executable(); err == nil {
		if abs, err := filepath.EvalSymlinks(exe); err == nil {
			return abs
		}
		return exe
	}
	return "clawd"
}

func fileExistsAt(p string) bool {
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

// ensureCredential issues the per-client credential of kind for the
// workspace unless a valid one is saved already.
func ensureCredential(cmd *cobra.Command, f *installFlags, kind, path string, dryRun bool) error {
	if text, err := token.ReadFile(path); err == nil {
		if _, _, ok := token.ParseClientCredential(text); ok {
			return nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return runtimeError("%v", safetext.PathError("credential", path, err))
	}
	if dryRun {
		cmd.PrintErrf("clawd: would issue a %s credential for %s and save it to %s\n", kind, shellWord(f.workspace), shellWord(path))
		return nil
	}
	ws, err := runstate.ResolveWorkspace(runstate.Options{Workspace: f.workspace, ConfigFile: f.configFile, Port: -1})
	if err != nil {
		return runtimeError("%v", err)
	}
	id, _, saved, err := issueCredential(ws, kind, "clawd install", true)
	if err != nil {
		return err
	}
	cmd.PrintErrf("clawd: issued %s credential %s for entity %s:%s, saved to %s\n", kind, id, kind, ws.ID, shellWord(saved))
	return nil
}

func applyChanges(cmd *cobra.Command, changes []hostadapter.Change, dryRun bool, verb string) error {
	out := cmd.OutOrStdout()
	if !dryRun {
		// Refuse before the first write, not halfway through the files.
		for _, c := range changes {
			if err := c.Check(); err != nil {
				return runtimeError("%v", err)
			}
		}
	}
	any := false
	for _, c := range changes {
		if !c.Changed() {
			continue
		}
		any = true
		if dryRun {
			// The diff shows lines of a file a repository may have brought:
			// JSONC comments can hold escape sequences. CRLF shows as LF.
			d := strings.ReplaceAll(hostadapter.Diff(c.File, c.Before, c.After), "\r\n", "\n")
			fmt.Fprint(out, terminalSafe(d))
			continue
		}
		if err := hostadapter.Apply(c); err != nil {
			return runtimeError("writing %s: %v", shellWord(c.File), err)
		}
		// The file is named as one shell word: its path holds the
		// workspace's, which a newline could split into lines of its own.
		line := verb + " " + shellWord(c.File)
		if c.Note != "" {
			line += " (" + c.Note + ")"
		} else if st, err := os.Stat(c.File + hostadapter.BackupSuffix); err == nil && st.Mode().IsRegular() && c.Before != nil && !c.NoBackup {
			line += " (original kept in " + shellWord(c.File+hostadapter.BackupSuffix) + ")"
		}
		fmt.Fprintln(out, terminalSafe(line))
	}
	if !any {
		fmt.Fprintln(out, "nothing to change: already as asked")
	}
	return nil
}

// httpEntryAddr is the address an installed HTTP entry names: the one the
// daemon listens on (bind_addr and port). Any other loopback address is one
// the daemon does not hold, where another user's process could listen and
// be handed the credential.
func httpEntryAddr(ws *runstate.Workspace) string {
	host := strings.Trim(ws.Config.BindAddr, "[]")
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(ws.Config.Port))
}

// checkEntryDaemon says whether the workspace's own HTTP daemon holds the
// address an installed entry names, as `clawd tools` checks before it sends
// the token. The client sends what the headers helper prints to that
// address whoever listens there: while clawd does not, any local user may,
// and would be handed the credential.
func checkEntryDaemon(ws *runstate.Workspace) error {
	addr := httpEntryAddr(ws)
	st := ws.StateFile(runstate.TCP)
	switch {
	case st == nil:
		return fmt.Errorf("no tcp_loopback daemon of workspace %s is running (start it with `clawd serve --transport tcp_loopback --workspace %[1]s`)", shellWord(ws.Dir))
	case st.Addr != addr:
		return fmt.Errorf("the workspace's daemon listens on %s, not on %s where the entry points (bind_addr and port in the config); restart it, or install the entry again", st.Addr, addr)
	}
	pid, err := runstate.ProbeHealth(addr)
	if err != nil {
		return fmt.Errorf("http://%s does not answer /health (%v)", addr, err)
	}
	if pid != st.PID {
		return fmt.Errorf("http://%s answers as pid %d, not as the daemon's pid %d", addr, pid, st.PID)
	}
	return nil
}

func newTokenHeaderCmd() *cobra.Command {
	var f clientFlags
	var kind string
	cmd := &cobra.Command{
		Use:   "header --client KIND",
		Short: "Print {\"Authorization\": \"Bearer <credential>\"} for a client's headers helper",
		Long: "Print the saved per-client credential of KIND as a JSON object of HTTP headers, the form Claude\n" +
			"Code's headersHelper expects; the client runs it at each connection, so a new credential is\n" +
			"picked up without editing its config.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !config.IsClientKind(kind) {
				return usageError("--client %q: use one of %s", kind, strings.Join(config.ClientKinds, ", "))
			}
			ws, err := runstate.ResolveWorkspace(runstate.Options{Workspace: f.workspace, ConfigFile: f.configFile, Port: -1})
			if err != nil {
				return runtimeError("%v", err)
			}
			text, err := readCredentialFile(ws, kind)
			if err != nil {
				return runtimeError("%v", err)
			}
			if err := checkEntryDaemon(ws); err != nil {
				return runtimeError("not handing out the %s credential: %v", kind, err)
			}
			return writeJSON(cmd.OutOrStdout(), map[string]string{"Authorization": "Bearer " + text})
		},
	}
	fl := cmd.Flags()
	f.registerWorkspace(cmd)
	fl.StringVar(&kind, "client", "", "credential kind: cc, oc or local (required)")
	return cmd
}
