package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/clawde/clawd/internal/cli/hostadapter"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/support/secrets"
)

// clientFile is a client's MCP configuration file and the JSON member that
// holds its server entries. This only reads; `clawd install` writes them.
type clientFile struct {
	client string // the name `clawd install` takes
	path   string
	key    []string // path of members to the object of entries
}

// knownClientFiles are the files the clients read: where `clawd install`
// writes each client's entry, for every scope (the adapters are the one
// list of places), plus places the clients also read that install never
// writes (Claude Code's per-project entries in ~/.claude.json, OpenCode's
// .jsonc spelling).
func knownClientFiles(ws *runstate.Workspace) []clientFile {
	cfgDir, _ := os.UserConfigDir()
	var out []clientFile
	for _, name := range hostadapter.Names() {
		a, err := hostadapter.Lookup(name)
		if err != nil {
			continue
		}
		for _, sc := range a.Scopes() {
			e, err := a.Entry(hostadapter.Options{Workspace: ws.Dir, Home: ws.Paths.Home, ConfigDir: cfgDir, XDGConfig: hostadapter.XDGConfigHome(ws.Paths.Home), ClaudeConfigDir: hostadapter.ClaudeConfigDir(),
				GOOS: runtime.GOOS, Scope: sc, Transport: hostadapter.Stdio, Command: "clawd"})
			if err == nil {
				out = append(out, clientFile{name, e.File, e.Path})
			}
		}
	}
	home := ws.Paths.Home
	claudeJSON := filepath.Join(home, ".claude.json")
	if d := hostadapter.ClaudeConfigDir(); d != "" {
		claudeJSON = filepath.Join(d, ".claude.json")
	}
	out = append(out,
		clientFile{"claude-code", claudeJSON, []string{"projects", ws.Dir, "mcpServers"}},
		clientFile{"opencode", filepath.Join(ws.Dir, "opencode.jsonc"), []string{"mcp"}},
		clientFile{"opencode", filepath.Join(hostadapter.XDGConfigHome(home), "opencode", "opencode.jsonc"), []string{"mcp"}},
	)
	// An adapter may already name one of the extra places (an existing
	// .jsonc file): each place is reported once.
	seen := map[string]bool{}
	uniq := out[:0]
	for _, f := range out {
		k := f.path + "\x00" + strings.Join(f.key, "\x00")
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, f)
		}
	}
	return uniq
}

// mcpEntry is one server entry in any of the formats: Claude Code, Cursor,
// VS Code and Claude Desktop use command + args or url; OpenCode uses a
// command array and url.
type mcpEntry struct {
	Command json.RawMessage `json:"command"`
	Args    []string        `json:"args"`
	URL     string          `json:"url"`
}

// argv returns the command line of a stdio entry.
func (e *mcpEntry) argv() []string {
	var one string
	if json.Unmarshal(e.Command, &one) == nil && one != "" {
		return append([]string{one}, e.Args...)
	}
	var many []string
	if json.Unmarshal(e.Command, &many) == nil {
		return append(many, e.Args...)
	}
	return nil
}

// checkClients reports every entry that runs clawd and whether it is
// current; it returns the entity kinds the entries use (--client KIND).
func checkClients(r *doctorReport, ws *runstate.Workspace, daemons []daemonInfo) map[string]bool {
	kinds := map[string]bool{}
	found := 0
	for _, cf := range knownClientFiles(ws) {
		data, err := hostadapter.ReadConfig(cf.path) // bounded, regular files only: a project file is untrusted
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		var root any
		if err == nil {
			err = decodeClientFile(data, &root)
		}
		if err != nil {
			r.add(check{Area: "client", Status: statusWarn, What: fmt.Sprintf("%s: cannot read %s: %v", cf.client, cf.path, err),
				Info: map[string]any{"client": cf.client, "file": cf.path}, Fix: "fix the file's JSON; the client cannot read it either"})
			continue
		}
		for _, k := range cf.key {
			m, _ := root.(map[string]any)
			root = m[k]
		}
		servers, _ := root.(map[string]any)
		for _, name := range sortedAnyKeys(servers) {
			raw, _ := json.Marshal(servers[name])
			var e mcpEntry
			if json.Unmarshal(raw, &e) != nil {
				continue
			}
			c, kind, ok := judgeEntry(cf, name, &e, ws, daemons)
			if !ok {
				continue
			}
			found++
			if kind != "" {
				kinds[kind] = true
			}
			r.add(c)
		}
	}
	if found == 0 {
		r.add(check{Area: "client", Status: statusWarn, What: "no client configuration found that runs clawd for this workspace",
			Fix: "clawd install claude-code (or opencode, cursor, vscode, claude-desktop)"})
	}
	return kinds
}

// judgeEntry decides whether an entry is clawd's and whether it is current:
// a stdio entry must pin `serve --transport stdio --client KIND` (a config's
// transport would otherwise turn it into a daemon the client cannot talk
// to) or be `connect`; an HTTP entry must point at a running daemon.
func judgeEntry(cf clientFile, name string, e *mcpEntry, ws *runstate.Workspace, daemons []daemonInfo) (check, string, bool) {
	where := fmt.Sprintf("%s entry %q in %s", cf.client, name, cf.path)
	info := map[string]any{"client": cf.client, "file": cf.path, "entry": name}
	fix := fmt.Sprintf("clawd install %s writes a current entry", cf.client)
	if e.URL != "" {
		u, err := url.Parse(e.URL)
		if err != nil {
			return check{}, "", false
		}
		info["url"] = secrets.MaskURL(e.URL)
		for _, d := range daemons {
			if d.state.Transport == runstate.TCP && u.Host == d.state.Addr {
				c := check{Area: "client", Status: statusOK, Info: info, What: where + " reaches the running daemon at " + secrets.MaskURL(e.URL)}
				if d.state.WorkspaceID != ws.ID {
					c.Status, c.Fix = statusWarn, "that daemon serves "+d.state.Workspace+", not this workspace"
					c.What = where + " reaches the daemon of " + d.state.Workspace
				}
				return c, "", true
			}
		}
		if !strings.Contains(strings.ToLower(name), "clawd") {
			return check{}, "", false // someone else's server
		}
		return check{Area: "client", Status: statusFail, Info: info, Fix: fix + ", or start the daemon: clawd serve --transport tcp_loopback",
			What: where + " points at " + secrets.MaskURL(e.URL) + ", where no clawd daemon runs"}, "", true
	}
	argv := e.argv()
	if len(argv) == 0 {
		return check{}, "", false
	}
	base := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	if base != "clawd" {
		return check{}, "", false
	}
	info["command"] = secrets.MaskText(strings.Join(argv, " "))
	if filepath.IsAbs(argv[0]) {
		if _, err := os.Stat(argv[0]); err != nil {
			return check{Area: "client", Status: statusFail, Info: info, Fix: fix,
				What: where + " runs " + argv[0] + ", which does not exist"}, "", true
		}
	}
	args := argv[1:]
	kind := flagValue(args, "--client")
	if len(args) > 0 && args[0] == "connect" {
		return check{Area: "client", Status: statusOK, Info: info, What: where + " runs clawd connect" + kindNote(kind)}, kind, true
	}
	if len(args) > 0 && args[0] == "serve" && flagValue(args, "--transport") == config.TransportStdio && kind != "" {
		return check{Area: "client", Status: statusOK, Info: info, What: where + " runs clawd serve on stdio" + kindNote(kind)}, kind, true
	}
	return check{Area: "client", Status: statusFail, Info: info, Fix: fix,
		What: where + " runs `" + secrets.MaskText(strings.Join(argv, " ")) + "`, which does not pin `serve --transport stdio --client KIND` " +
			"(a transport in the config would turn it into a daemon the client cannot talk to)"}, kind, true
}

func kindNote(kind string) string {
	if kind == "" {
		return ""
	}
	return " as --client " + kind
}

// flagValue returns the value of --name V or --name=V in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func sortedAnyKeys(m map[string]any) []string {
	b := make(map[string]bool, len(m))
	for k := range m {
		b[k] = true
	}
	return sortedKeys(b)
}

// decodeClientFile decodes a client's config file into v the way the
// clients read it: comments and trailing commas (OpenCode and VS Code accept
// both) and a leading UTF-8 byte order mark are allowed.
func decodeClientFile(data []byte, v any) error {
	if err := hostadapter.CheckNesting(data); err != nil {
		return err
	}
	// A newline after the end: hujson refuses a // comment that ends the
	// file without one.
	std, err := hujson.Standardize(append(bytes.Clone(bytes.TrimPrefix(data, []byte("\ufeff"))), '\n'))
	if err != nil {
		return err
	}
	return json.Unmarshal(std, v)
}
