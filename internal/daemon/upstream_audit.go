package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/upstream"
)

// upstreamAuditor writes the upstream manager's events (spawn, connect,
// disconnect, refusals) as audit rows, in order, off the manager's
// goroutines: a row takes a commit, which a spawn or connect should not
// wait for. It never drops an event: add blocks while the queue is full.
type upstreamAuditor struct {
	log  chain.AuditLog
	warn func(msg string, args ...any)

	mu     sync.Mutex
	closed bool
	ch     chan upstream.Event
	done   chan struct{}
}

func newUpstreamAuditor(log chain.AuditLog, warn func(string, ...any)) *upstreamAuditor {
	a := &upstreamAuditor{log: log, warn: warn, ch: make(chan upstream.Event, 256), done: make(chan struct{})}
	go a.run()
	return a
}

// add queues ev (upstream.Options.OnEvent). Events after close are logged,
// not recorded.
func (a *upstreamAuditor) add(ev upstream.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		a.warn("upstream servers: an event after shutdown was not audited", "server", ev.Server, "event", ev.Kind)
		return
	}
	a.ch <- ev
}

func (a *upstreamAuditor) run() {
	defer close(a.done)
	for ev := range a.ch {
		if _, err := a.log.Record(a.record(ev)); err != nil {
			a.warn("upstream servers: writing an audit row failed", "server", ev.Server, "event", ev.Kind, "err", err)
		}
	}
}

// close writes what is queued and stops.
func (a *upstreamAuditor) close() {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.ch)
	}
	a.mu.Unlock()
	<-a.done
}

// record is ev's audit row (docs/upstreams.md, "Audit"): the daemon's own
// action, tool "mcp:SERVER", step "upstream", Deny for refusals, the reason
// "EVENT: detail" on one line with secrets masked.
func (a *upstreamAuditor) record(ev upstream.Event) *chain.AuditRecord {
	result := chain.ResultAllow
	if ev.Kind == upstream.EventRefuse || ev.Kind == upstream.EventEgressRefused {
		result = chain.ResultDeny
	}
	detail := ev.Detail
	if ev.Kind == upstream.EventSpawn {
		detail = a.spawnDetail(ev)
	}
	return &chain.AuditRecord{
		Time: time.Now(), EntityID: "clawd", ToolID: "mcp:" + ev.Server, TrustLevel: chain.NoTrustLevel,
		Result: result, Reason: ev.Kind + ": " + auditText(detail), Step: "upstream", Transport: "daemon",
		Server: ev.Server,
	}
}

// spawnDetail is the command as run (masked), the SHA-256 of the
// executable as executed (hashed through the descriptor that was run) and
// the pid.
func (a *upstreamAuditor) spawnDetail(ev upstream.Event) string {
	words := make([]string, 0, len(ev.Args)+1)
	for _, w := range append([]string{ev.Path}, ev.Args...) {
		words = append(words, strconv.Quote(w))
	}
	sum := ev.SHA256
	if sum == "" {
		sum = "unknown"
	}
	return fmt.Sprintf("command %s; sha256 %s; pid %d", strings.Join(words, " "), sum, ev.PID)
}

// maxAuditDetail bounds an event's reason: a row is a record, not a log.
const maxAuditDetail = 2048

// auditText is s on one line, with what looks like a secret masked and
// clipped to maxAuditDetail bytes (at a character boundary).
func auditText(s string) string {
	s = secrets.MaskText(strings.Join(strings.Fields(s), " "))
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
	if len(s) > maxAuditDetail {
		cut := maxAuditDetail
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
