// Package upstream is clawd's client half: it connects to upstream MCP
// servers (a local program over stdio, or a URL over Streamable HTTP or
// legacy SSE) and offers their tools as providers in a tools.Registry, next
// to the built-in ones, so every call still goes through the chain.
//
// The input is a plain []ServerConfig (the daemon builds it from the store);
// the output is one tools.Provider per server in the registry, and a Status
// per server (Manager.Status, Options.OnStatus) for the store and the CLI.
// See docs/architecture.md ("How an upstream provider plugs in") for where
// the providers meet the chain.
package upstream

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// Transport is how clawd reaches an upstream server.
type Transport string

const (
	// TransportStdio: clawd starts Command and speaks newline-delimited
	// JSON-RPC on its stdin and stdout.
	TransportStdio Transport = "stdio"
	// TransportHTTP: MCP Streamable HTTP at URL.
	TransportHTTP Transport = "http"
	// TransportSSE: the legacy HTTP+SSE transport (protocol 2024-11-05).
	TransportSSE Transport = "sse"
)

// Timeout bounds and defaults, in the units a user types (seconds).
const (
	MinTimeout            = 5 * time.Second
	MaxTimeout            = 300 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	DefaultReadTimeout    = 60 * time.Second
)

// ServerConfig is one upstream server as the user configured it. Values of
// Env and Headers (and nothing else) may reference clawd's environment as
// ${VAR} or $VAR; they are resolved when the server is started or
// connected, never stored resolved, so a secret can stay in the user's
// environment instead of clawd's database.
type ServerConfig struct {
	// Name is the server's id: the provider id (hence the supply-chain
	// allowlist key) and the prefix of its exposed tool names.
	Name string
	// ID is the stored row's id (0: none), stable across renames: a server
	// renamed while its process is being stopped starts its new process
	// only once that one has ended, as for a disable and enable.
	ID        int64
	Transport Transport

	// stdio
	Command string
	Args    []string
	Cwd     string
	Env     map[string]string

	// http, sse
	URL     string
	Headers map[string]string

	// ConnectTimeout bounds starting the program or opening the connection
	// plus the initialize handshake; ReadTimeout bounds every later
	// request (tools/list, tools/call). Zero means the default; otherwise
	// 5-300 s.
	ConnectTimeout, ReadTimeout time.Duration

	Enabled bool

	// Identity says whether each call carries the caller's identity
	// (docs/upstreams.md). It is not part of the connection: changing it
	// applies to the next call without reconnecting.
	Identity identity.Config
}

// validServerName: 1-128 of [A-Za-z0-9 ._-] (the store is stricter:
// docs/upstreams.md). A loop, not a regular expression: `{1,128}` compiles
// to 128 copies of the class, which cost every clawd start most of a
// millisecond.
func validServerName(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Validate reports what is wrong with c, naming the field and what to do.
// It does not resolve ${VAR} references or look the command up: those are
// checked when the server starts, and a failure shows in its Status.
func (c ServerConfig) Validate() error {
	var errs []error
	if !validServerName(c.Name) || strings.TrimSpace(c.Name) != c.Name {
		errs = append(errs, fmt.Errorf("server name %q: use 1-128 letters, digits, '_', '-', '.' or inner spaces", c.Name))
	}
	switch c.Transport {
	case TransportStdio:
		if c.Command == "" {
			errs = append(errs, fmt.Errorf("server %q: a stdio server needs a command", c.Name))
		}
		if c.URL != "" || len(c.Headers) > 0 {
			errs = append(errs, fmt.Errorf("server %q: url and headers are for http/sse servers, not stdio", c.Name))
		}
		// Identifiers, as the store has them (store.ValidateEnv), so a
		// row that bypassed it runs nothing either. Among what this keeps
		// out: bash's exported functions, imported only from variables
		// named BASH_FUNC_name%% (or BASH_FUNC_name()), which would run
		// in place of a command the script calls.
		for k := range c.Env {
			if !secrets.IsEnvName(k) {
				errs = append(errs, fmt.Errorf("server %q: environment name %q is not a valid variable name: use letters, digits and '_', not starting with a digit", c.Name, k))
			}
		}
	case TransportHTTP, TransportSSE:
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("server %q: url %q must be an absolute http:// or https:// URL", c.Name, secrets.MaskURL(c.URL)))
		} else if u.User != nil {
			errs = append(errs, fmt.Errorf("server %q: put credentials in a header (Authorization: Bearer ${VAR}), not in the url", c.Name))
		}
		if c.Command != "" || len(c.Args) > 0 || c.Cwd != "" || len(c.Env) > 0 {
			errs = append(errs, fmt.Errorf("server %q: command, args, cwd and env are for stdio servers", c.Name))
		}
		for k, v := range c.Headers {
			if k == "" || strings.ContainsAny(k, ": \r\n\x00") || strings.ContainsAny(v, "\r\n\x00") {
				errs = append(errs, fmt.Errorf("server %q: header %q is not a valid HTTP header", c.Name, k))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("server %q: transport %q: use stdio, http or sse", c.Name, c.Transport))
	}
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"connect timeout", c.ConnectTimeout}, {"read timeout", c.ReadTimeout}} {
		if t.d != 0 && (t.d < MinTimeout || t.d > MaxTimeout) {
			errs = append(errs, fmt.Errorf("server %q: %s %v: use 5-300 seconds", c.Name, t.name, t.d))
		}
	}
	if err := c.Identity.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("server %q: %w", c.Name, err))
	}
	return errors.Join(errs...)
}

func (c ServerConfig) connectTimeout() time.Duration {
	if c.ConnectTimeout == 0 {
		return DefaultConnectTimeout
	}
	return c.ConnectTimeout
}

func (c ServerConfig) readTimeout() time.Duration {
	if c.ReadTimeout == 0 {
		return DefaultReadTimeout
	}
	return c.ReadTimeout
}

// equal reports whether a and b describe the same connection (so Apply
// keeps the running client). Identity is not compared: Apply hands a new
// setting to the running server.
func (a ServerConfig) equal(b ServerConfig) bool {
	return a.Name == b.Name && a.Transport == b.Transport && a.Command == b.Command &&
		slices.Equal(a.Args, b.Args) && a.Cwd == b.Cwd && maps.Equal(a.Env, b.Env) &&
		a.URL == b.URL && maps.Equal(a.Headers, b.Headers) &&
		a.ConnectTimeout == b.ConnectTimeout && a.ReadTimeout == b.ReadTimeout && a.Enabled == b.Enabled
}

// expandMap resolves every value of m with secrets.ExpandRefs (the one
// rule for references, shared with the store: an unset variable and one of
// clawd's own are errors naming it, never an empty or secret value); the
// error names the key.
func expandMap(m map[string]string, lookup func(string) (string, bool)) (map[string]string, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		r, err := secrets.ExpandRefs(v, lookup)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = r
	}
	return out, nil
}
