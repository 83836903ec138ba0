package mcp

import (
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
)

// clawd speaks two eras of MCP (docs/transports.md, "Protocol revisions"):
//
//   - legacy (2025-11-25 and earlier): an initialize handshake fixes the
//     version, the client's identity claim and its capabilities for the
//     session (a stdio process, a socket connection, an Mcp-Session-Id);
//   - modern (2026-07-28): no handshake and no session; every request
//     carries its version, capabilities and identity claim in
//     params._meta, and is served on its own.
//
// The era is chosen per request: a request whose _meta claims a protocol
// version (ClaimedVersion) is modern; initialize, and a request without a
// claim, take the legacy path. One stream may carry both.

// ModernVersions are the per-request (stateless) versions clawd speaks,
// newest first.
var ModernVersions = []string{"2026-07-28"}

// NewestVersion is the newest protocol version clawd speaks (health's
// mcp_version).
func NewestVersion() string { return ModernVersions[0] }

// IsModernVersion reports whether v is one of ModernVersions.
func IsModernVersion(v string) bool { return slices.Contains(ModernVersions, v) }

// AllVersions is every version clawd speaks, newest first: server/discover's
// supportedVersions and the supported list of -32022. The modern ones are
// claimed per request in _meta; the legacy ones (SupportedVersions) are
// negotiated by initialize.
func AllVersions() []string { return append(slices.Clone(ModernVersions), SupportedVersions...) }

// The _meta keys of the modern era.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Error codes the 2026-07-28 revision defines.
const (
	CodeHeaderMismatch             = -32020
	CodeMissingClientCapability    = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// requestMeta is what a request's params._meta says, each member as its
// JSON text (nil when absent).
type requestMeta struct {
	ProtocolVersion    jsontext.Value
	ClientCapabilities jsontext.Value
	ClientInfo         jsontext.Value
	LogLevel           jsontext.Value
	ProgressToken      jsontext.Value
}

// paramsMeta returns params._meta as its JSON text (nil when absent or when
// params is not an object; the method's own decoding reports that).
func paramsMeta(params jsontext.Value) jsontext.Value {
	if len(params) == 0 || params.Kind() != '{' {
		return nil
	}
	var p struct {
		Meta jsontext.Value `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Meta
}

// decodeMeta reads a _meta object. A _meta that is not an object decodes to
// nothing (the caller decides whether that is an error). Names match
// exactly; the parser already refused names that differ only by case.
func decodeMeta(meta jsontext.Value) (requestMeta, bool) {
	var m requestMeta
	if len(meta) == 0 || meta.Kind() != '{' {
		return m, false
	}
	var all map[string]jsontext.Value
	if json.Unmarshal(meta, &all) != nil {
		return m, false
	}
	m.ProtocolVersion = all[MetaProtocolVersion]
	m.ClientCapabilities = all[MetaClientCapabilities]
	m.ClientInfo = all[MetaClientInfo]
	m.LogLevel = all[MetaLogLevel]
	m.ProgressToken = all["progressToken"]
	return m, true
}

// claim returns the version a _meta claims: ok is false when it claims none
// (no _meta, no protocolVersion member, or one of the legacy versions, which
// are negotiated by initialize and never select the stateless path, as in
// the official Go SDK). A protocolVersion that is not a string is a claim
// of "" (answered -32602 by the modern path).
func (m *requestMeta) claim() (version string, ok bool) {
	if len(m.ProtocolVersion) == 0 {
		return "", false
	}
	if m.ProtocolVersion.Kind() != '"' {
		return "", true
	}
	var v string
	json.Unmarshal(m.ProtocolVersion, &v)
	if IsSupportedVersion(v) {
		return "", false
	}
	return v, true
}

// ClaimedVersion reports the protocol version a request's _meta claims, and
// whether it claims one at all. A request that claims one is served by the
// modern (stateless) path, whatever the version; an unsupported version is
// answered there with -32022. Notifications, responses and batches never
// claim one. Streamable HTTP asks this to choose between a session and a
// stateless request, and to compare the claim with MCP-Protocol-Version.
func ClaimedVersion(msg *jsonrpc.Message) (string, bool) {
	if msg.Batch != nil || msg.IsResponse || msg.IsNotification() {
		return "", false
	}
	m, _ := decodeMeta(paramsMeta(msg.Params))
	return m.claim()
}

// IsStateless reports whether Streamable HTTP serves msg without a session:
// a request claiming a protocol version in _meta (ClaimedVersion),
// server/discover (which only the stateless path answers), or any message
// sent with an MCP-Protocol-Version header (headerVersion) that is not a
// legacy version (such a request must claim it in _meta, or gets -32602).
func IsStateless(msg *jsonrpc.Message, headerVersion string) bool {
	if _, claimed := ClaimedVersion(msg); claimed {
		return true
	}
	if msg.Batch == nil && !msg.IsResponse && !msg.IsNotification() && msg.Method == "server/discover" {
		return true
	}
	return headerVersion != "" && !IsSupportedVersion(headerVersion)
}

// HeaderValues returns what the Streamable HTTP headers Mcp-Method and
// Mcp-Name must say for msg under the 2026-07-28 revision: the method, and
// for tools/call and prompts/get params.name, for resources/read
// params.uri (hasName false for other methods). A name member that is
// absent or not a string gives name "" with hasName true: no header can
// match it, so such a request is refused as a mismatch. This is the one
// place the transport learns MCP method names beyond OpensSession.
func HeaderValues(msg *jsonrpc.Message) (method, name string, hasName bool) {
	method = msg.Method
	member := ""
	switch method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read":
		member = "uri"
	default:
		return method, "", false
	}
	var p map[string]jsontext.Value
	if len(msg.Params) == 0 || json.Unmarshal(msg.Params, &p) != nil {
		return method, "", true
	}
	v := p[member]
	if v.Kind() != '"' {
		return method, "", true
	}
	json.Unmarshal(v, &name)
	return method, name, true
}

// unsupportedVersion is the -32022 error for a claimed version clawd does
// not speak per request.
//
// data.supported lists the versions this request could have claimed: every
// version for an unknown one (a client may still fall back to initialize),
// only the stateless ones when it claimed a legacy version, which this
// path does not serve, so that the requested version never appears in the
// list the error says it is missing from.
func unsupportedVersion(requested string) *jsonrpc.Error {
	supported := AllVersions()
	if IsSupportedVersion(requested) {
		supported = slices.Clone(ModernVersions)
	}
	return &jsonrpc.Error{
		Code: CodeUnsupportedProtocolVersion,
		Message: "unsupported protocol version " + quoteClip(requested) + ": claim one of " + joinVersions(ModernVersions) +
			" in _meta, or use initialize for " + joinVersions(SupportedVersions),
		Data: map[string]any{"supported": supported, "requested": requested},
	}
}

func joinVersions(vs []string) string {
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

func quoteClip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	b, _ := jsontext.AppendQuote(nil, s)
	if b == nil {
		return `"(not UTF-8)"`
	}
	return string(b)
}

// StatusFor is the HTTP status a modern request's JSON-RPC error takes on
// Streamable HTTP: 404 for -32601, 400 for -32602, -32020, -32021 and
// -32022, 200 otherwise (the error travels in the body).
func StatusFor(code int) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return 404
	case jsonrpc.CodeInvalidParams, CodeHeaderMismatch, CodeMissingClientCapability, CodeUnsupportedProtocolVersion:
		return 400
	}
	return 200
}
