package store

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// Transports of an MCP server row. The built-in row (clawd's own tools)
// has TransportBuiltin; every other row is an upstream reached over
// stdio, Streamable HTTP or the legacy HTTP+SSE transport.
const (
	TransportBuiltin = "builtin"
	TransportStdio   = "stdio"
	TransportHTTP    = "http"
	TransportSSE     = "sse"
)

// Statuses of an MCP server row (last_status), as the daemon records them
// (docs/upstreams.md says what each means). A row the daemon has not
// looked at yet is disconnected.
const (
	StatusDisconnected = "disconnected"
	StatusConnecting   = "connecting"
	StatusConnected    = "connected"
	StatusStale        = "stale"
	StatusUnavailable  = "unavailable"
	StatusError        = "error"
	StatusDisabled     = "disabled"
)

// Statuses lists every status a row may hold, in the order above.
var Statuses = []string{StatusDisconnected, StatusConnecting, StatusConnected, StatusStale, StatusUnavailable, StatusError, StatusDisabled}

// Timeout bounds and defaults, in seconds.
const (
	MinTimeoutSeconds     = 5
	MaxTimeoutSeconds     = 300
	DefaultConnectTimeout = 30
	DefaultReadTimeout    = 60
)

// Size bounds of an MCP server row; the migration's CHECKs hold the same
// numbers for the columns SQLite can check.
const (
	MaxServerName  = 128
	maxDescription = 1024
	maxCommand     = 4096
	maxArgs        = 1024
	maxArgBytes    = 64 << 10
	maxURL         = 2048
	maxPairs       = 128  // env entries, headers
	maxPairValue   = 8192 // one env or header value
	maxLastError   = 4096
)

// BuiltinServerName is the name of the built-in row: clawd's own tools.
const BuiltinServerName = "clawd"

// ValidationError is bad input to an MCP server row: the CLI exits 2 on
// it, the REST API will answer 400. One made by refused is well-formed
// input that the stored state refuses (a tool the server does not list, a
// definition that changed since it was reviewed): the CLI exits 1 on it.
type ValidationError struct {
	msg     string
	byState bool
}

func (e *ValidationError) Error() string { return e.msg }

func invalid(format string, a ...any) error {
	return &ValidationError{msg: fmt.Sprintf(format, a...)}
}

func refused(format string, a ...any) error {
	return &ValidationError{msg: fmt.Sprintf(format, a...), byState: true}
}

// IsRefusedByState reports whether err is (or wraps) a ValidationError
// that the stored state, not the input's form, makes.
func IsRefusedByState(err error) bool {
	var v *ValidationError
	return errors.As(err, &v) && v.byState
}

// IsValidation reports whether err is (or wraps) a ValidationError.
func IsValidation(err error) bool {
	var v *ValidationError
	return errors.As(err, &v)
}

// ValidateServerName checks an upstream server's name: 1-128 characters,
// letters, digits, '-' and '_', starting with a letter or digit, no "__"
// and no trailing '_'. Its tools are exposed as "{server}__{tool}", and
// MCP clients accept only ^[A-Za-z0-9_-]{1,64}$ (Claude Code, Cursor,
// VS Code, OpenAI-style APIs): a name from this set never forces a hash
// suffix for its characters, and without "__" or a trailing '_' in it the
// first "__" of an exposed name is always the separator. It is also a valid
// supply-chain allowlist id (`clawd mcp allow --server NAME`). Names are
// unique without regard to case, as clients that fold case would see two
// servers "GitHub" and "github" as one.
func ValidateServerName(name string) error {
	const rule = "use 1-128 letters, digits, '-' or '_', starting with a letter or digit, without '__' and not ending in '_' (tools are exposed as NAME__TOOL)"
	if name == "" || len(name) > MaxServerName {
		return invalid("server name %q: %s", printable(name, 140), rule)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return invalid("server name %q: character %q is not allowed; %s", printable(name, 140), rune(c), rule)
		}
	}
	if c := name[0]; c == '-' || c == '_' {
		return invalid("server name %q must start with a letter or digit; %s", name, rule)
	}
	if strings.Contains(name, "__") || strings.HasSuffix(name, "_") {
		return invalid("server name %q: '__' and a trailing '_' are reserved for the NAME__TOOL separator; %s", name, rule)
	}
	return nil
}

// ParseTransport maps a transport name to the stored one.
// "streamable_http" (and "streamable-http"), the name other MCP clients'
// configs use, mean "http" (docs/upstreams.md).
func ParseTransport(s string) (string, error) {
	switch strings.ToLower(s) {
	case TransportStdio:
		return TransportStdio, nil
	case TransportHTTP, "streamable_http", "streamable-http":
		return TransportHTTP, nil
	case TransportSSE:
		return TransportSSE, nil
	}
	return "", invalid("transport %q: use stdio, http (Streamable HTTP) or sse (legacy HTTP+SSE)", printable(s, 40))
}

// ValidateTimeout checks a timeout in seconds (5-300).
func ValidateTimeout(what string, seconds int) error {
	if seconds < MinTimeoutSeconds || seconds > MaxTimeoutSeconds {
		return invalid("%s %d: must be %d-%d seconds", what, seconds, MinTimeoutSeconds, MaxTimeoutSeconds)
	}
	return nil
}

// ValidateURL checks an upstream's URL: http or https, a host, no
// user:password@ (credentials go in a header, where they are masked and can
// be a ${VAR} reference), no fragment. Which addresses may be reached
// (loopback, private ranges) is not decided here.
func ValidateURL(raw string) error {
	if raw == "" {
		return invalid("URL is empty: give the server's endpoint, e.g. https://mcp.example.com/mcp")
	}
	if len(raw) > maxURL {
		return invalid("URL is %d bytes: at most %d", len(raw), maxURL)
	}
	if hasControl(raw) || strings.ContainsAny(raw, " \t") {
		return invalid("URL %q contains spaces or control characters", shownURL(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		// With an '@' before the query, the parser's message may quote a
		// piece of a password it read as a host or port (u:pa/ss@h).
		if before, _, _ := strings.Cut(raw, "?"); strings.Contains(before, "@") {
			return invalid("URL %q does not parse; put credentials in a header instead (--header 'Authorization: Bearer ${TOKEN}')", shownURL(raw))
		}
		return invalid("URL %q: %v", shownURL(raw), errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return invalid("URL %q: the scheme must be http or https", shownURL(raw))
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return invalid("URL %q has no host; expected e.g. https://mcp.example.com/mcp", shownURL(raw))
	}
	if p := u.Port(); p != "" {
		if _, err := net.LookupPort("tcp", p); err != nil || p == "0" {
			return invalid("URL %q: port %q is not a port number (1-65535)", shownURL(raw), p)
		}
	}
	if u.User != nil {
		return invalid("URL %q carries user:password@; put credentials in a header instead (--header 'Authorization: Bearer ${TOKEN}')", shownURL(raw))
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return invalid("URL %q has a #fragment, which HTTP never sends; remove it", shownURL(raw))
	}
	return nil
}

// shownURL is a URL as a validation message names it: masked as every
// output shows one (secrets.MaskURL, which masks whether or not the URL
// parses, so a refused URL never brings back its password or query
// secret, whichever rule it broke first), cut for a message.
func shownURL(raw string) string { return printable(secrets.MaskURL(raw), 200) }

// ValidateEnv checks a stdio server's environment: names are [A-Za-z_]
// [A-Za-z0-9_]* and not clawd's own (CLAWD_*, CLAWDE_*: they never reach a
// child); values have no NUL and their ${VAR}/$VAR references parse and do
// not name clawd's own variables.
func ValidateEnv(env map[string]string) error {
	if len(env) > maxPairs {
		return invalid("%d environment variables: at most %d", len(env), maxPairs)
	}
	for _, k := range sortedKeys(env) {
		if !secrets.IsEnvName(k) {
			return invalid("environment variable name %q: use letters, digits and '_', not starting with a digit", printable(k, 80))
		}
		if secrets.IsClawdVar(k) {
			return invalid("environment variable %s: CLAWD_* and CLAWDE_* are clawd's own and never reach an upstream", k)
		}
		if err := validateValue("environment variable "+k, env[k]); err != nil {
			return err
		}
	}
	return nil
}

// reservedHeaders are set by the MCP client transport itself; a
// configured value would break framing or sessions.
var reservedHeaders = []string{"Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id"}

// ValidateHeaders checks an HTTP server's headers: names are HTTP tokens,
// unique without regard to case and not one the MCP transport sets itself;
// values are non-empty, without control characters but tab, and their
// ${VAR}/$VAR references parse.
func ValidateHeaders(h map[string]string) error {
	if len(h) > maxPairs {
		return invalid("%d headers: at most %d", len(h), maxPairs)
	}
	seen := map[string]string{}
	for _, k := range sortedKeys(h) {
		if !httpToken(k) {
			return invalid("header name %q: use letters, digits and !#$%%&'*+-.^_`|~ (e.g. Authorization, X-Api-Key)", printable(k, 80))
		}
		lk := strings.ToLower(k)
		if prev, dup := seen[lk]; dup {
			return invalid("headers %s and %s differ only in case; HTTP treats them as one, keep one", prev, k)
		}
		seen[lk] = k
		for _, r := range reservedHeaders {
			if strings.EqualFold(k, r) {
				return invalid("header %s is set by the MCP transport itself and cannot be configured", k)
			}
		}
		v := h[k]
		if strings.TrimSpace(v) == "" {
			return invalid("header %s has an empty value", k)
		}
		if v != strings.TrimSpace(v) {
			return invalid("header %s: its value starts or ends with spaces, which HTTP drops; remove them", k)
		}
		for _, r := range v {
			if r != '\t' && (r < 0x20 || r == 0x7f) {
				return invalid("header %s: its value contains a control character (%U); a header value is one line", k, r)
			}
		}
		if err := validateValue("header "+k, v); err != nil {
			return err
		}
	}
	return nil
}

func validateValue(what, v string) error {
	if len(v) > maxPairValue {
		return invalid("%s: value is %d bytes, at most %d", what, len(v), maxPairValue)
	}
	if strings.IndexByte(v, 0) >= 0 {
		return invalid("%s: value contains a NUL byte", what)
	}
	if !utf8.ValidString(v) {
		return invalid("%s: value is not valid UTF-8", what)
	}
	if err := secrets.CheckRefs(v); err != nil {
		return invalid("%s: %v", what, err)
	}
	return nil
}

// httpToken: RFC 9110 token characters.
func httpToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validateCommand checks a stdio server's command, arguments and working
// directory (absolute: the daemon that starts the server runs elsewhere).
func validateCommand(cmd string, args []string, cwd string) error {
	if strings.TrimSpace(cmd) == "" {
		return invalid("a stdio server needs a command: clawd mcp add NAME --stdio -- COMMAND [ARGS...]")
	}
	if len(cmd) > maxCommand || strings.IndexByte(cmd, 0) >= 0 || !utf8.ValidString(cmd) {
		return invalid("command %q: at most %d bytes of UTF-8 without NUL", printable(cmd, 80), maxCommand)
	}
	if len(args) > maxArgs {
		return invalid("%d arguments: at most %d", len(args), maxArgs)
	}
	for i, a := range args {
		if len(a) > maxArgBytes || strings.IndexByte(a, 0) >= 0 || !utf8.ValidString(a) {
			return invalid("argument %d: at most %d bytes of UTF-8 without NUL", i+1, maxArgBytes)
		}
	}
	if cwd != "" {
		if len(cwd) > maxCommand || strings.IndexByte(cwd, 0) >= 0 || !utf8.ValidString(cwd) {
			return invalid("working directory: at most %d bytes of UTF-8 without NUL", maxCommand)
		}
		if !filepath.IsAbs(cwd) {
			return invalid("working directory %q must be an absolute path", printable(cwd, 200))
		}
	}
	return nil
}

// validateServer checks a whole row before it is written.
func validateServer(s *MCPServer) error {
	if err := ValidateServerName(s.Name); err != nil {
		return err
	}
	if len(s.Description) > maxDescription || !utf8.ValidString(s.Description) || strings.IndexByte(s.Description, 0) >= 0 {
		return invalid("description: at most %d bytes of UTF-8 without NUL", maxDescription)
	}
	if err := ValidateTimeout("connect timeout", s.ConnectTimeoutSeconds); err != nil {
		return err
	}
	if err := ValidateTimeout("read timeout", s.ReadTimeoutSeconds); err != nil {
		return err
	}
	if s.IdentityMode == "" {
		s.IdentityMode = IdentityOff
	}
	if err := ValidateIdentity(s.IdentityMode, s.IdentityArg, s.IdentityAudience); err != nil {
		return err
	}
	switch s.Transport {
	case TransportStdio:
		if s.URL != "" || len(s.Headers) > 0 {
			return invalid("a stdio server has no URL or headers (those are for --http)")
		}
		if err := validateCommand(s.Command, s.Args, s.Cwd); err != nil {
			return err
		}
		return ValidateEnv(s.Env)
	case TransportHTTP, TransportSSE:
		if s.Command != "" || len(s.Args) > 0 || s.Cwd != "" || len(s.Env) > 0 {
			return invalid("an %s server has no command, arguments, working directory or environment (those are for --stdio)", s.Transport)
		}
		if err := ValidateURL(s.URL); err != nil {
			return err
		}
		return ValidateHeaders(s.Headers)
	case TransportBuiltin:
		return invalid("the built-in transport is clawd's own row; an upstream uses stdio, http or sse")
	}
	_, err := ParseTransport(s.Transport)
	return err
}

// Identity forwarding modes (identity_mode).
const (
	IdentityOff    = string(identity.ModeOff)
	IdentityMeta   = string(identity.ModeMeta)
	IdentitySigned = string(identity.ModeSigned)
)

// ValidateIdentity checks a server's identity forwarding setting.
func ValidateIdentity(mode, arg, audience string) error {
	c := identity.Config{Mode: identity.Mode(mode), Arg: arg, Audience: audience}
	if mode == "" {
		return invalid("identity mode \"\": use off, meta or signed")
	}
	if err := c.Validate(); err != nil {
		return invalid("%v", err)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return true
		}
	}
	return false
}

// printable quotes nothing but cuts s to at most n bytes (on a rune
// boundary) for an error message; %q does the escaping.
func printable(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
