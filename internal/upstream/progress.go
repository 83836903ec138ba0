package upstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/support/safetext"
	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/tools"
)

// Progress of a proxied call. A client that wants progress puts its own
// progressToken on tools/call; that token is the client's, scoped to its
// session, and two clients may well use the same one. So clawd never sends
// it upstream: each proxied call gets a token of clawd's own, unique to the
// call (random per upstream session, plus a counter), and the upstream's
// notifications/progress for that token are handed to the calling client's
// reporter (tools.ReportProgress), which writes them under the client's
// token on the channel that carries the call's answer. A notification for
// a token clawd did not hand out, or for a call that has returned, finds no
// route and is dropped; so is one whose progress does not increase.
//
// Delivery never blocks the upstream session's reader (one slow client
// must not stall the answers of other calls on the same upstream): each
// route keeps only the newest report, and a goroutine of the call writes
// it. A client that reads slowly sees fewer, never out-of-order, reports.

// maxProgressMessage bounds the message of one forwarded progress report.
const maxProgressMessage = 1024

// progressRoutes is one upstream session's table from clawd's tokens to
// the calls waiting for their progress.
type progressRoutes struct {
	prefix string // random per session

	mu     sync.Mutex
	next   uint64
	routes map[string]*progressRoute
	live   atomic.Int32 // len(routes), read without mu by active
}

// active reports whether any call waits for progress.
func (r *progressRoutes) active() bool { return r != nil && r.live.Load() > 0 }

func newProgressRoutes() *progressRoutes {
	var b [8]byte
	rand.Read(b[:])
	return &progressRoutes{prefix: "clawd-" + hex.EncodeToString(b[:]) + "-", routes: map[string]*progressRoute{}}
}

type progressNote struct {
	progress, total float64
	message         string
}

type progressRoute struct {
	mu     sync.Mutex
	closed bool // the upstream's answer was read: later reports are dropped
	latest *progressNote
	last   float64
	seen   bool
	// secret is text the reports must not carry to the client (the
	// signed identity token sent with the call), "" for none.
	secret string
	kick   chan struct{} // cap 1
	done   chan struct{}
	ended  chan struct{}
}

// open hands out a fresh token whose reports go to ctx's reporter until
// the returned stop is called; stop waits until no report can follow. A
// report's message has secret (when not "") masked.
func (r *progressRoutes) open(ctx context.Context, secret string) (token string, rt *progressRoute, stop func()) {
	rt = &progressRoute{secret: secret, kick: make(chan struct{}, 1), done: make(chan struct{}), ended: make(chan struct{})}
	r.mu.Lock()
	r.next++
	token = r.prefix + strconv.FormatUint(r.next, 10)
	r.routes[token] = rt
	r.live.Store(int32(len(r.routes)))
	r.mu.Unlock()
	go rt.forward(ctx)
	return token, rt, func() {
		r.mu.Lock()
		delete(r.routes, token)
		r.live.Store(int32(len(r.routes)))
		r.mu.Unlock()
		close(rt.done)
		<-rt.ended
	}
}

// deliverRaw routes a notifications/progress the connection has just read
// (raw params), in the order the upstream sent it: a report read before
// the call's answer reaches the call even if the SDK's handler, which runs
// on another goroutine, gets to it only after the answer closed the route.
// The handler's copy of the same report is then dropped as not increasing.
func (r *progressRoutes) deliverRaw(params []byte) {
	if r == nil {
		return
	}
	var p mcp.ProgressNotificationParams
	if json.Unmarshal(params, &p) == nil {
		r.deliver(&p)
	}
}

// deliver routes one notifications/progress from the upstream.
func (r *progressRoutes) deliver(p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	tok, ok := p.ProgressToken.(string)
	if !ok {
		return // clawd's tokens are strings; anything else is not ours
	}
	r.mu.Lock()
	rt := r.routes[tok]
	r.mu.Unlock()
	if rt == nil {
		return
	}
	// The upstream's text reaches a client, maybe a terminal. Cleaned
	// before the secret is masked: cleaning drops invisible characters, so
	// a token split by one would otherwise come out whole.
	msg := safetext.Line(p.Message)
	if rt.secret != "" {
		msg = strings.ReplaceAll(msg, rt.secret, secrets.Masked) // before the cut, which could split it
	}
	if len(msg) > maxProgressMessage {
		msg = strings.ToValidUTF8(msg[:maxProgressMessage], "") + "…"
	}
	rt.mu.Lock()
	if rt.closed || (rt.seen && p.Progress <= rt.last) {
		rt.mu.Unlock()
		return // progress must increase, and ends with the answer
	}
	rt.seen, rt.last = true, p.Progress
	rt.latest = &progressNote{progress: p.Progress, total: p.Total, message: msg}
	rt.mu.Unlock()
	select {
	case rt.kick <- struct{}{}:
	default:
	}
}

// forward writes the newest report each time one comes; when the call
// ends it writes the one still waiting, so the last report the upstream
// sent before its answer always reaches the client (before clawd's answer).
func (rt *progressRoute) forward(ctx context.Context) {
	defer close(rt.ended)
	send := func() {
		rt.mu.Lock()
		n := rt.latest
		rt.latest = nil
		rt.mu.Unlock()
		if n != nil {
			tools.ReportProgress(ctx, n.progress, n.total, n.message)
		}
	}
	for {
		select {
		case <-rt.kick:
			send()
		case <-rt.done:
			send()
			return
		}
	}
}

// close drops every report that comes after it. The stdio connection
// (stdioConn.routeDirect) and the Streamable HTTP client (captureBody) deliver
// reports as they read them (deliverRaw) and call close when they read the
// upstream's answer to the call, so what the upstream sent before its
// answer is forwarded and what it sent after is dropped, although the SDK
// hands notifications to their handler on another goroutine, in no fixed
// order with the answer. The handler (session.go) is kept for what those
// readers never see: every report of a legacy SSE upstream, and a report a
// Streamable HTTP upstream sends on its standalone GET stream rather than
// on the call's own POST stream. For these, stop, when the call returns,
// ends the route; a report read in between still reaches the client,
// before clawd's answer. A report both paths see is forwarded once: the
// handler's copy does not increase the progress. On stdio the handler
// sees no report while a route is open (the connection keeps them).
func (rt *progressRoute) close() {
	rt.mu.Lock()
	rt.closed = true
	rt.mu.Unlock()
}

type routeKey struct{}

// withRoute marks the context of the request whose answer closes rt.
func withRoute(ctx context.Context, rt *progressRoute) context.Context {
	return context.WithValue(ctx, routeKey{}, rt)
}
