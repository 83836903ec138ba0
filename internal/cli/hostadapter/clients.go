package hostadapter

import (
	"fmt"
	"path/filepath"
)

// Each client's file, server map and entry shape; docs/clients.md shows
// them side by side. Socket entries run `clawd connect`, a stdio bridge to
// the workspace daemon, so every client that can spawn a command reaches
// the socket; they pin --workspace because the bridge must find the daemon
// and credential of that workspace whatever directory the client starts in.

func init() {
	register(claudeCode{})
	register(openCode{})
	register(mcpServersClient{name: "cursor", dir: ".cursor", file: "mcp.json"})
	register(vsCode{})
	register(claudeDesktop{})
}

// stdioArgs is the argument list of the stdio or socket entry. The stdio
// entry pins --transport stdio so a transport line in the user's clawd
// config cannot turn it into a daemon the client cannot talk to.
func stdioArgs(o Options, kind string, pinWorkspace bool) ([]string, error) {
	switch o.Transport {
	case Stdio, "":
		args := []string{"serve", "--transport", "stdio", "--client", kind}
		if pinWorkspace {
			args = append(args, "--workspace", o.Workspace)
		}
		return args, nil
	case UnixSocket:
		return []string{"connect", "--client", kind, "--workspace", o.Workspace}, nil
	}
	return nil, fmt.Errorf("transport %q is not a stdio transport", o.Transport)
}

func scopeFile(o Options, project, user string) string {
	if o.Scope == User {
		return user
	}
	return project
}

type claudeCode struct{}

func (claudeCode) Name() string    { return "claude-code" }
func (claudeCode) Kind() string    { return "cc" }
func (claudeCode) Scopes() []Scope { return []Scope{Project, User} }
func (claudeCode) ProjectMarker(ws string) string {
	return filepath.Join(ws, ".mcp.json")
}

// Claude Code: project .mcp.json and the user's ~/.claude.json, both with
// "mcpServers". Over HTTP the bearer comes from headersHelper, a command
// Claude Code runs for each connection, so a rotated credential is read
// fresh.
func (c claudeCode) Entry(o Options) (Entry, error) {
	user := filepath.Join(o.Home, ".claude.json")
	if o.ClaudeConfigDir != "" {
		user = filepath.Join(o.ClaudeConfigDir, ".claude.json")
	}
	e := Entry{File: scopeFile(o, c.ProjectMarker(o.Workspace), user), Path: []string{"mcpServers"}}
	var v any
	if o.Transport == TCPLoopback {
		v = struct {
			Type          string `json:"type"`
			URL           string `json:"url"`
			HeadersHelper string `json:"headersHelper"`
		}{"http", o.URL, shellJoin(o.Command, "token", "header", "--client", c.Kind(), "--workspace", o.Workspace)}
	} else {
		args, err := stdioArgs(o, c.Kind(), false)
		if err != nil {
			return e, err
		}
		v = struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}{"stdio", o.Command, args}
	}
	var err error
	e.Value, err = marshal(v)
	return e, err
}

type openCode struct{}

func (openCode) Name() string    { return "opencode" }
func (openCode) Kind() string    { return "oc" }
func (openCode) Scopes() []Scope { return []Scope{Project, User} }
func (openCode) ProjectMarker(ws string) string {
	if p := filepath.Join(ws, "opencode.jsonc"); fileExists(p) {
		return p
	}
	return filepath.Join(ws, "opencode.json")
}

// OpenCode: "mcp" in opencode.json(c), in the project or
// $XDG_CONFIG_HOME/opencode/ (~/.config/opencode/ without it, on every OS). Over HTTP the header holds a {file:...} reference,
// which OpenCode replaces with the credential file's content when it loads
// the config; "oauth": false keeps it from starting an OAuth flow.
func (c openCode) Entry(o Options) (Entry, error) {
	dir := o.XDGConfig
	if dir == "" {
		dir = filepath.Join(o.Home, ".config")
	}
	user := filepath.Join(dir, "opencode", "opencode.json")
	if p := filepath.Join(dir, "opencode", "opencode.jsonc"); fileExists(p) {
		user = p
	}
	e := Entry{File: scopeFile(o, c.ProjectMarker(o.Workspace), user), Path: []string{"mcp"}}
	var v any
	if o.Transport == TCPLoopback {
		if o.CredentialFile == "" {
			return e, fmt.Errorf("opencode over tcp_loopback needs the oc credential file")
		}
		v = struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Enabled bool              `json:"enabled"`
			OAuth   bool              `json:"oauth"`
			Headers map[string]string `json:"headers"`
		}{"remote", o.URL, true, false, map[string]string{"Authorization": "Bearer {file:" + o.CredentialFile + "}"}}
	} else {
		args, err := stdioArgs(o, c.Kind(), false)
		if err != nil {
			return e, err
		}
		v = struct {
			Type    string   `json:"type"`
			Command []string `json:"command"`
			Enabled bool     `json:"enabled"`
		}{"local", append([]string{o.Command}, args...), true}
	}
	var err error
	e.Value, err = marshal(v)
	return e, err
}

// noHTTP explains why a client gets no tcp_loopback entry: it has no way to
// read a header from a file or command when it connects, and a pasted
// credential would break at the next rotation and sit in a readable file.
func noHTTP(name string) error {
	return fmt.Errorf("%s cannot read a credential fresh for an HTTP entry; use --transport unix_socket (clawd connect reads it each start) or stdio", name)
}

// mcpServersClient is a client with {"mcpServers": {...}} entries of the
// plain {command, args} shape in <project>/<dir>/<file> and ~/<dir>/<file>:
// Cursor.
type mcpServersClient struct{ name, dir, file string }

func (c mcpServersClient) Name() string  { return c.name }
func (mcpServersClient) Kind() string    { return "local" }
func (mcpServersClient) Scopes() []Scope { return []Scope{Project, User} }
func (c mcpServersClient) ProjectMarker(ws string) string {
	return filepath.Join(ws, c.dir, c.file)
}

func (c mcpServersClient) Entry(o Options) (Entry, error) {
	e := Entry{File: scopeFile(o, c.ProjectMarker(o.Workspace), filepath.Join(o.Home, c.dir, c.file)), Path: []string{"mcpServers"}}
	if o.Transport == TCPLoopback {
		return e, noHTTP(c.name)
	}
	args, err := stdioArgs(o, c.Kind(), false)
	if err != nil {
		return e, err
	}
	e.Value, err = marshal(struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{o.Command, args})
	return e, err
}

type vsCode struct{}

func (vsCode) Name() string    { return "vscode" }
func (vsCode) Kind() string    { return "local" }
func (vsCode) Scopes() []Scope { return []Scope{Project, User} }
func (vsCode) ProjectMarker(ws string) string {
	return filepath.Join(ws, ".vscode", "mcp.json")
}

// VS Code: "servers" in .vscode/mcp.json (JSONC) or the user profile's
// mcp.json.
func (c vsCode) Entry(o Options) (Entry, error) {
	e := Entry{File: scopeFile(o, c.ProjectMarker(o.Workspace), filepath.Join(o.ConfigDir, "Code", "User", "mcp.json")), Path: []string{"servers"}}
	if o.Transport == TCPLoopback {
		return e, noHTTP("VS Code")
	}
	args, err := stdioArgs(o, c.Kind(), false)
	if err != nil {
		return e, err
	}
	e.Value, err = marshal(struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{"stdio", o.Command, args})
	return e, err
}

type claudeDesktop struct{}

func (claudeDesktop) Name() string                { return "claude-desktop" }
func (claudeDesktop) Kind() string                { return "local" }
func (claudeDesktop) Scopes() []Scope             { return []Scope{User} }
func (claudeDesktop) ProjectMarker(string) string { return "" }

// Claude Desktop: the user's claude_desktop_config.json, stdio servers
// only. It starts servers in no particular directory, so the entry pins
// --workspace.
func (c claudeDesktop) Entry(o Options) (Entry, error) {
	e := Entry{File: filepath.Join(o.ConfigDir, "Claude", "claude_desktop_config.json"), Path: []string{"mcpServers"}}
	if o.Transport == TCPLoopback {
		return e, fmt.Errorf("Claude Desktop runs only stdio servers; use --transport stdio or unix_socket")
	}
	args, err := stdioArgs(o, c.Kind(), true)
	if err != nil {
		return e, err
	}
	e.Value, err = marshal(struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{o.Command, args})
	return e, err
}
