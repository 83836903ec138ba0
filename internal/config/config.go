// Package config loads and validates clawd's TOML configuration and derives
// every path clawd uses from HOME and the XDG variables, so a test can move
// all of them by setting those variables to a temporary directory.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/safetext"
)

// Transports.
const (
	TransportStdio       = "stdio"
	TransportUnixSocket  = "unix_socket"
	TransportTCPLoopback = "tcp_loopback"
)

// Config is the file's content after defaults are applied.
type Config struct {
	Transport      string `toml:"transport"`
	SocketPath     string `toml:"socket_path"`
	Port           int    `toml:"port"`
	BindAddr       string `toml:"bind_addr"`
	ToolTimeoutMS  int    `toml:"tool_timeout_ms"`
	PolicyStubMode bool   `toml:"policy_stub_mode"`
	TokenPath      string `toml:"token_path"`
	MaxReadBytes   int64  `toml:"max_read_bytes"`
	MaxConcurrency int    `toml:"max_concurrency"`
	// MaxMessageBytes caps one JSON-RPC message (a stdio line or HTTP body).
	MaxMessageBytes int `toml:"max_message_bytes"`
	// AuditSync is "normal" (the default: a recorded decision survives a
	// crash of clawd, kill -9 included) or "full" (every decision's journal
	// line is also fsynced, so it survives power loss, at the cost of an
	// fsync per call).
	AuditSync string `toml:"audit_sync"`
	// DefaultClientKind is the entity kind of a client that proves only that
	// it is this machine's user: the workspace bearer token over HTTP, peer
	// credentials on the unix socket, and stdio without --client. A per-client
	// credential (`clawd token issue`) names its own kind instead.
	DefaultClientKind string `toml:"default_client_kind"`
	// UpstreamToolNameMax is the longest name an upstream tool is offered
	// under (SERVER__TOOL; longer ones get a shortened, hashed name). 64 is
	// what Claude Code, Cursor, VS Code and OpenAI-style APIs accept; a
	// client that adds its own prefix to every name (Claude Code:
	// mcp__<its name for clawd>__) may need less.
	UpstreamToolNameMax int `toml:"upstream_tool_name_max"`
	// Tools switches tools on (true, the default) or off, by name. Names are
	// checked against the tools that exist by CheckTools, not by Validate.
	Tools map[string]bool `toml:"tools"`
}

// Default returns the configuration used when no file exists.
func Default() *Config {
	return &Config{
		Transport:       TransportStdio,
		Port:            7430,
		BindAddr:        "127.0.0.1",
		ToolTimeoutMS:   2000,
		PolicyStubMode:  false,
		MaxReadBytes:    1 << 20,
		MaxConcurrency:  16,
		MaxMessageBytes: 4 << 20,
		AuditSync:       "normal",

		DefaultClientKind: "local",

		UpstreamToolNameMax: MaxUpstreamToolName,
	}
}

// The range of upstream_tool_name_max: a hashed name needs room for a bit
// of the server and tool names plus "_" and 8 hex digits, and clients
// refuse names over 64 characters.
const (
	MinUpstreamToolName = 16
	MaxUpstreamToolName = 64
)

// ClientKinds are the entity kinds a local credential may carry: cc
// (Claude Code), oc (OpenCode), local (any other host). "device" is for
// paired devices, which prove themselves with their own key.
var ClientKinds = []string{"cc", "oc", "local"}

// IsClientKind reports whether kind is one of ClientKinds.
func IsClientKind(kind string) bool {
	for _, k := range ClientKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// ToolEnabled reports whether a tool is switched on.
func (c *Config) ToolEnabled(name string) bool {
	on, ok := c.Tools[name]
	return !ok || on
}

// DisabledTools returns the set of tools switched off.
func (c *Config) DisabledTools() map[string]bool {
	out := map[string]bool{}
	for name, on := range c.Tools {
		if !on {
			out[name] = true
		}
	}
	return out
}

// BindError is the startup refusal of a non-loopback bind address. Its text
// starts with bind_0000_rejected (README.md, docs/transports.md), a fixed
// name that logs, scripts and tests can match.
type BindError struct{ Addr string }

func (e *BindError) Error() string {
	if e.Addr == "0.0.0.0" || e.Addr == "::" || e.Addr == "[::]" {
		return "bind_0000_rejected — external binding is forbidden (bind_addr = " + e.Addr + ")"
	}
	return "bind_0000_rejected — external binding is forbidden: bind_addr " + e.Addr + " is not a loopback address; use 127.0.0.1 or ::1"
}

// Validate checks every field; the first problem is returned, naming the key.
func (c *Config) Validate() error {
	switch c.Transport {
	case TransportStdio, TransportUnixSocket, TransportTCPLoopback:
	default:
		return fmt.Errorf("transport = %q: must be one of stdio, unix_socket, tcp_loopback", c.Transport)
	}
	if err := ValidateBindAddr(c.BindAddr); err != nil {
		return err
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("port = %d: must be 0..65535 (0 picks a free port)", c.Port)
	}
	if c.ToolTimeoutMS <= 0 || c.ToolTimeoutMS > 3_600_000 {
		return fmt.Errorf("tool_timeout_ms = %d: must be 1..3600000", c.ToolTimeoutMS)
	}
	if c.MaxReadBytes <= 0 || c.MaxReadBytes > 256<<20 {
		return fmt.Errorf("max_read_bytes = %d: must be 1..268435456", c.MaxReadBytes)
	}
	if c.MaxConcurrency <= 0 || c.MaxConcurrency > 1024 {
		return fmt.Errorf("max_concurrency = %d: must be 1..1024", c.MaxConcurrency)
	}
	if c.MaxMessageBytes < 1024 || c.MaxMessageBytes > 64<<20 {
		return fmt.Errorf("max_message_bytes = %d: must be 1024..67108864", c.MaxMessageBytes)
	}
	if c.UpstreamToolNameMax < MinUpstreamToolName || c.UpstreamToolNameMax > MaxUpstreamToolName {
		return fmt.Errorf("upstream_tool_name_max = %d: must be %d..%d (clients refuse tool names over %d characters)",
			c.UpstreamToolNameMax, MinUpstreamToolName, MaxUpstreamToolName, MaxUpstreamToolName)
	}
	if c.AuditSync != "normal" && c.AuditSync != "full" {
		return fmt.Errorf("audit_sync = %q: must be \"normal\" or \"full\"", c.AuditSync)
	}
	if !IsClientKind(c.DefaultClientKind) {
		return fmt.Errorf("default_client_kind = %q: must be one of %s", c.DefaultClientKind, strings.Join(ClientKinds, ", "))
	}
	for _, p := range []struct{ key, val, example string }{
		{"socket_path", c.SocketPath, "~/.clawd/clawd.sock"},
		{"token_path", c.TokenPath, "~/.claude/hooks/.clawde-token-myworkspace"},
	} {
		// No file system takes a NUL in a name: such a path could only
		// fail later, at bind or open, with a message naming no key.
		if strings.ContainsRune(p.val, 0) {
			return fmt.Errorf("%s = %q: must be a path without a NUL character (no file system takes one)", p.key, p.val)
		}
		// A relative path would be taken from the directory clawd runs
		// in: a client starts `clawd serve` in the project, so the token
		// or socket would land in the repository.
		if p.val != "" && p.val != "~" && !strings.HasPrefix(p.val, "~/") && !filepath.IsAbs(p.val) {
			return fmt.Errorf("%s = %q: must be an absolute path or start with ~/ (a relative one would be taken from the directory clawd runs in, often a repository)", p.key, p.val)
		}
		// The home directory, a path ending in a separator, . or .. names
		// a directory: the socket's bind or the token's write could only
		// fail later, with a message naming no key.
		if p.val == "" {
			continue
		}
		if base := filepath.Base(strings.TrimRight(p.val, `/\`)); p.val == "~" || strings.HasSuffix(p.val, "/") || strings.HasSuffix(p.val, `\`) || base == "." || base == ".." {
			return fmt.Errorf("%s = %q: must name a file, not a directory (for example %s)", p.key, p.val, p.example)
		}
	}
	return nil
}

// CheckTools reports a [tools] key that names none of the known tools, with
// the list of known ones. Which tools exist is known only where the tool
// registry is (the daemon at start and on reload; clawd doctor and explain
// pass the built-in names), so Validate does not check [tools] names.
// Keys are checked in sorted order, so the error is deterministic.
func (c *Config) CheckTools(known []string) error {
	names := make([]string, 0, len(c.Tools))
	for name := range c.Tools {
		names = append(names, name)
	}
	slices.Sort(names)
	isKnown := make(map[string]bool, len(known))
	for _, k := range known {
		isKnown[k] = true
	}
	for _, name := range names {
		if !isKnown[name] {
			return fmt.Errorf("[tools] %s: unknown tool; known tools are %s", keyPath([]string{name}), strings.Join(known, ", "))
		}
	}
	return nil
}

// typeProblem rewrites go-toml's "cannot decode TOML integer into bool"
// (or "... into struct field config.Config.Port of type int") in the
// user's terms.
func typeProblem(msg string) string {
	msg = strings.TrimPrefix(msg, "toml: ")
	got, want, ok := strings.Cut(strings.TrimPrefix(msg, "cannot decode TOML "), " into ")
	if !ok || !strings.HasPrefix(msg, "cannot decode TOML ") {
		return msg
	}
	if i := strings.LastIndex(want, " of type "); i >= 0 {
		want = want[i+len(" of type "):]
	}
	words := map[string]string{"bool": "true or false", "int": "an integer", "int64": "an integer", "string": "a quoted string"}
	if w, ok := words[want]; ok {
		want = w
	}
	return "expected " + want + ", got a TOML " + got
}

// ValidateBindAddr accepts only loopback IP addresses ("localhost" too).
func ValidateBindAddr(addr string) error {
	if addr == "localhost" {
		return nil
	}
	a, err := netip.ParseAddr(strings.Trim(addr, "[]"))
	if err != nil {
		return &BindError{Addr: addr}
	}
	if !a.IsLoopback() {
		return &BindError{Addr: addr}
	}
	return nil
}

// Parse decodes TOML strictly (unknown keys are errors naming the key),
// applies defaults for absent keys and validates the result.
func Parse(data []byte) (*Config, error) {
	c := Default()
	// A UTF-8 byte order mark (Windows editors write one) is not content.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) {
			var keys []string
			for _, e := range sm.Errors {
				keys = append(keys, keyPath(e.Key()))
			}
			return nil, fmt.Errorf("unknown key %s (see `clawd init` for the keys clawd reads)", strings.Join(keys, ", "))
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			if key := keyPath(de.Key()); key != "" {
				return nil, fmt.Errorf("line %d, column %d: %s: %s", row, col, key, typeProblem(de.Error()))
			}
			return nil, fmt.Errorf("line %d, column %d: %s", row, col, strings.TrimPrefix(de.Error(), "toml: "))
		}
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// keyPath writes a dotted key as TOML would: a part that is not a bare
// key (empty, with a dot, a space, a control character) is quoted, so a
// message names the key the file has, visibly.
func keyPath(parts []string) string {
	out := make([]string, len(parts))
	for i, k := range parts {
		out[i] = k
		if k == "" || strings.IndexFunc(k, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) >= 0 {
			out[i] = strconv.Quote(k)
		}
	}
	return strings.Join(out, ".")
}

// MaxFileBytes bounds the config file: the commented default is a few KB.
const MaxFileBytes = 1 << 20

// Load reads the file at path. A missing file yields the defaults, unless
// required is set (the user named the file explicitly).
func Load(path string, required bool) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !required {
			return Default(), nil
		}
		return nil, safetext.PathError("config", path, err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return c, nil
}

// FileError is a config file that does not parse or check. Its message
// says where and what, and what to do; Problem is the where and what alone
// (clawd doctor gives the fix a line of its own).
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Problem() string {
	return fmt.Sprintf("config %s: %v", safetext.ShellWord(e.Path), e.Err)
}

func (e *FileError) Error() string {
	return e.Problem() + "; edit the file to fix it (clawd init --force --config " + safetext.ShellWord(e.Path) + " replaces it with the commented defaults)"
}

func (e *FileError) Unwrap() error { return e.Err }

// readFile reads a regular file of at most MaxFileBytes. The open does not
// wait on a FIFO, and a device (/dev/zero) or a huge file is refused
// rather than read without end: every clawd command and the daemon's
// reload read this file.
func readFile(path string) ([]byte, error) {
	f, err := fileutil.OpenNoWait(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, errors.New("is a directory, not a config file")
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err == nil && len(data) > MaxFileBytes {
		err = fmt.Errorf("larger than %d KiB; clawd's config is a few KB: is this the right file?", MaxFileBytes>>10)
	}
	return data, err
}
