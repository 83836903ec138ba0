// Package mcp is clawd's MCP server core: the session lifecycle, version
// negotiation, the method table, concurrency and cancellation. It is
// transport-agnostic: a transport hands it a jsonrpc.Connection (Serve) or
// the parsed message of one HTTP body (Handle) together with the caller it
// authenticated; framing (lines, bodies) is the transport's.
//
// Data flows one way: transport -> jsonrpc -> Session -> chain -> tool.
package mcp

import (
	"context"
	"log/slog"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/tools"
)

// ServerName is serverInfo.name.
const ServerName = "clawde-mcp"

// SupportedVersions are the legacy protocol versions this server
// negotiates with initialize, newest first (ModernVersions are claimed per
// request instead; era.go).
var SupportedVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// LatestVersion is answered to an initialize asking for an unsupported
// version: the newest legacy version.
var LatestVersion = SupportedVersions[0]

// IsSupportedVersion reports whether v is one of SupportedVersions.
func IsSupportedVersion(v string) bool {
	for _, s := range SupportedVersions {
		if s == v {
			return true
		}
	}
	return false
}

// Instructions is the initialize result's instructions for a workspace: what
// the tools reach and what they do not. It must state only what holds: the
// file tools are confined to the workspace by os.Root, bash is not (it runs
// with clawd's user rights, and a process that leaves its process group
// outlives the call); TestInstructionsSayWhatHolds and the tools' tests
// back each sentence.
func Instructions(workspace string) string {
	return "clawd gives tools for the workspace " + workspace + ". read_file, write_file, list_dir and search take " +
		"paths relative to it (absolute paths inside it work too) and refuse any path that leads outside it, " +
		"through .. or a symlink, with error -32005 sandbox_violation. bash is not confined to the workspace: " +
		"it starts there (or in working_dir) but runs with the rights of clawd's user, so a command can read and " +
		"write anything that user can; its process group is killed when it exits or times out, but a process " +
		"that leaves the group (setsid, set -m) can outlive the call. Which tools you may call depends on your " +
		"trust level; a refused call's error message says why and what would change it."
}

// MethodHandler serves an extension method (such as clawd/health). It
// returns a result that marshals to JSON, or a JSON-RPC error. s is the
// session the request came on; for a request claiming a protocol version
// in _meta it is a view of that session carrying the request's own caller,
// claim and version (the modern path takes only the credential from the
// connection), and nil for a stateless request on Streamable HTTP, which
// has no session.
type MethodHandler func(ctx context.Context, s *Session, params jsontext.Value) (any, *jsonrpc.Error)

// Server holds what every session shares.
type Server struct {
	Version  string // serverInfo.version (semver)
	Registry *tools.Registry
	Chain    chain.Authorizer
	Logger   *slog.Logger
	// Instructions is sent in the initialize result.
	Instructions string
	// MaxConcurrency bounds the tools/call handlers running at once over
	// all sessions (config max_concurrency; read once, at the first call).
	// MaxMessageBytes caps one message (config max_message_bytes). Zero
	// takes config.Default()'s value.
	MaxConcurrency  int
	MaxMessageBytes int
	// Extensions are extra methods, available after initialize.
	Extensions map[string]MethodHandler

	inline inlineWatch // watches calls run on stream readers (stream.go)

	// The registry's change events reach sessions through toolChanges
	// (listchanged.go); watchOnce subscribes on the first session.
	watchOnce   sync.Once
	toolChanges debouncer

	limitOnce sync.Once
	calls     *callLimiter // tools/call in flight over all sessions (limit.go)

	mu       sync.Mutex
	sessions map[*Session]struct{}

	listenMu  sync.Mutex
	listeners map[*listener]struct{} // open subscriptions/listen (listen.go)
	// listenEnded: EndSubscriptions ran; a subscription registering later
	// ends at once (guarded by listenMu).
	listenEnded bool
}

func (srv *Server) logger() *slog.Logger {
	if srv.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return srv.Logger
}

// CallLimit is the number of tools/call handlers that may run at once over
// all sessions: MaxConcurrency, or config's default (also for a nil srv).
func (srv *Server) CallLimit() int {
	if srv == nil || srv.MaxConcurrency <= 0 {
		return config.Default().MaxConcurrency
	}
	return srv.MaxConcurrency
}

// MessageLimit is the largest message a transport may hand to a session, in
// bytes: MaxMessageBytes, or config's default (also for a nil srv, which a
// transport configured without a server may ask).
func (srv *Server) MessageLimit() int {
	if srv == nil || srv.MaxMessageBytes <= 0 {
		return config.Default().MaxMessageBytes
	}
	return srv.MaxMessageBytes
}

func (srv *Server) limiter() *callLimiter {
	srv.limitOnce.Do(func() { srv.calls = &callLimiter{max: srv.CallLimit()} })
	return srv.calls
}

func (srv *Server) track(s *Session) {
	srv.watchOnce.Do(srv.watchRegistry)
	srv.mu.Lock()
	if srv.sessions == nil {
		srv.sessions = map[*Session]struct{}{}
	}
	srv.sessions[s] = struct{}{}
	srv.mu.Unlock()
}

func (srv *Server) untrack(s *Session) {
	srv.mu.Lock()
	delete(srv.sessions, s)
	srv.mu.Unlock()
}

// watchRegistry forwards the registry's change events (a provider added,
// removed or changing its tools) to sessions as list_changed, debounced.
// The subscription lasts as long as the server: a Server is not shut down.
func (srv *Server) watchRegistry() {
	if srv.Registry == nil {
		return
	}
	srv.toolChanges = debouncer{delay: toolChangeDelay, max: toolChangeMaxDelay, fire: srv.NotifyToolsChanged}
	srv.Registry.Subscribe(srv.toolChanges.changed)
}

// NotifyToolsChanged sends notifications/tools/list_changed to every
// initialized (legacy) session that can receive server messages (stream
// transports), and, tagged with the subscription id, to every
// subscriptions/listen that asked for it (every transport). A connection
// that neither initialized nor subscribed gets nothing. Each receiver gets
// its own on a goroutine of its own (coalesced): one that stops reading
// delays no other.
func (srv *Server) NotifyToolsChanged() {
	srv.notifyListeners()
	srv.mu.Lock()
	list := make([]*Session, 0, len(srv.sessions))
	for s := range srv.sessions {
		list = append(list, s)
	}
	srv.mu.Unlock()
	msg, _ := jsonrpc.AppendNotification(nil, "notifications/tools/list_changed", nil)
	for _, s := range list {
		if s.initialized() && s.canPush() {
			s.changed.run(func() { s.push(msg) })
		}
	}
}

// VisibleTools returns the tools the caller's policy allows, for tools/list.
// (Health's active_tools counts the caller-independent part, chain.Active.)
func (srv *Server) VisibleTools(caller *chain.Caller) []tools.Entry {
	return srv.Chain.VisibleOf(caller, srv.Registry.All())
}
