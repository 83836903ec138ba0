package daemon

import (
	"path/filepath"
	"strings"

	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/sandbox"
)

// Why each piece of state is protected, as the refusal and the audit row
// say it.
const (
	whyDataDir = "clawd's data directory (trust registry, audit log, session.secret)"
	whySecret  = "clawd's own state: session.secret is the key that signs bearer tokens"
	whyDB      = "clawd's own state: clawd.db holds the trust registry and the audit log"
	whyConfig  = "clawd's own state: the config file, which clawd hot-reloads (tools on/off, policy_stub_mode)"
	whyCfgDir  = "clawd's config directory (its mcp-server.toml is hot-reloaded)"
	whyToken   = "clawd's own state: a bearer token or credential file of a clawd daemon"
	whySocket  = "clawd's own state: a daemon's unix socket or its lock file"
)

// protectedSet lists clawd's own state for the workspace guard. Every path
// clawd reads or writes belongs here; a new kind of state file is one more
// line. Which of them lie inside the workspace is the guard's business.
func (d *Daemon) protectedSet() sandbox.ProtectedSet {
	p := d.Paths
	cfg := d.Config()
	tokenFile := runstate.TokenPath(cfg, p, d.WorkspaceID)
	defaultTokens := filepath.Dir(p.TokenPath(d.WorkspaceID))
	set := sandbox.ProtectedSet{
		Dirs: []sandbox.Protected{
			{Path: p.DataDir, Why: whyDataDir},
		},
		Files: []sandbox.Protected{
			{Path: p.SecretFile, Why: whySecret},
			{Path: p.DBFile + "*", Why: whyDB}, // clawd.db, -wal, -shm, -journal
			{Path: d.ConfigFile, Why: whyConfig},
			// The token file, per-client credential files next to it
			// (<token>.<kind>) and the temp files they are written through.
			{Path: tokenFile + "*", Why: whyToken},
			{Path: filepath.Join(filepath.Dir(tokenFile), "."+filepath.Base(tokenFile)) + "*", Why: whyToken},
			// Every workspace's tokens in the default place.
			{Path: filepath.Join(defaultTokens, ".clawde-token-") + "*", Why: whyToken},
			{Path: filepath.Join(defaultTokens, "..clawde-token-") + "*", Why: whyToken},
			// Default sockets and lock files of every workspace, and this
			// workspace's configured one.
			{Path: filepath.Join(p.RuntimeDir, "clawd.") + "*", Why: whySocket},
			{Path: runstate.SocketPath(cfg, p, d.WorkspaceID, "") + "*", Why: whySocket},
		},
	}
	// The default config file's directory is clawd's own (an editor's temp
	// files, a future second file); a --config file elsewhere is protected
	// alone, not the directory it happens to be in.
	if d.ConfigFile == p.ConfigFile {
		set.Dirs = append(set.Dirs, sandbox.Protected{Path: filepath.Dir(p.ConfigFile), Why: whyCfgDir})
	}
	return set
}

// guardWorkspace attaches the guard and warns once when clawd's state lies
// inside the workspace.
func (d *Daemon) guardWorkspace() {
	g := sandbox.NewGuard(d.WS, d.protectedSet())
	inside := g.Inside()
	if len(inside) == 0 {
		return
	}
	msg := "the workspace contains clawd's own state; read_file, write_file and search refuse it " +
		"(list_dir still lists names), but bash is not confined and can read or change it: " +
		"serve a narrower workspace, or switch bash off for it"
	if !sandbox.GuardEnforced {
		msg = "the workspace contains clawd's own state and this system gives no file identities, so the " +
			"file tools cannot be kept from it, and bash is not confined either: serve a narrower workspace"
	}
	d.Logger.Warn(msg, "workspace", d.WS.Dir, "protected", strings.Join(topLevel(inside), ", "))
}

// protectSocket adds a socket path given only on the command line.
func (d *Daemon) protectSocket(path string) {
	if g := d.WS.Guard(); g != nil {
		g.Add(sandbox.ProtectedSet{Files: []sandbox.Protected{{Path: path + "*", Why: whySocket}}})
	}
}

// topLevel drops the items that lie below another listed directory, for a
// warning that names each place once.
func topLevel(items []string) []string {
	var out []string
	for _, it := range items {
		covered := false
		for _, other := range items {
			if other != it && !strings.HasSuffix(other, "*") && strings.HasPrefix(it, other+string(filepath.Separator)) {
				covered = true
			}
		}
		if !covered {
			out = append(out, it)
		}
	}
	return out
}
