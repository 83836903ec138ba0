package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/support/safetext"
	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/upstream"
)

// upstreamAuditor writes the daemon's upstream rows in order, off the
// goroutines that report them: the manager's events (spawn, connect,
// disconnect, refusals; add) and the rows the daemon builds itself
// (definition changes, identity refusals; addRecord). A row takes a
// commit, which a spawn or connect should not wait for. It never drops a
// row: adding blocks while the queue is full.
type upstreamAuditor struct {
	log  chain.AuditLog
	warn func(msg string, args ...any)

	mu     sync.Mutex
	closed bool
	ch     chan *chain.AuditRecord
	done   chan struct{}
}

func newUpstreamAuditor(log chain.AuditLog, warn func(string, ...any)) *upstreamAuditor {
	a := &upstreamAuditor{log: log, warn: warn, ch: make(chan *chain.AuditRecord, 256), done: make(chan struct{})}
	go a.run()
	return a
}

// add queues ev's row (upstream.Options.OnEvent).
func (a *upstreamAuditor) add(ev upstream.Event) { a.queue(a.record(ev)) }

// addRecord queues a row the daemon built (its reason already safe to
// store), as step "upstream" of transport "daemon".
func (a *upstreamAuditor) addRecord(r chain.AuditRecord) {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Step, r.Transport, r.TrustLevel = "upstream", "daemon", chain.NoTrustLevel
	a.queue(&r)
}

// queue hands r to the writer goroutine. Rows after close are logged, not
// recorded.
func (a *upstreamAuditor) queue(r *chain.AuditRecord) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		a.warn("upstream servers: an event after shutdown was not audited", "tool", r.ToolID, "reason", r.Reason)
		return
	}
	a.ch <- r
}

func (a *upstreamAuditor) run() {
	defer close(a.done)
	for r := range a.ch {
		if _, err := a.log.Record(r); err != nil {
			a.warn("upstream servers: writing an audit row failed", "tool", r.ToolID, "reason", r.Reason, "err", err)
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

// auditText is s on one line, cleaned of terminal escapes and invisible
// characters (safetext), with what looks like a secret masked and clipped
// to maxAuditDetail bytes (at a character boundary).
func auditText(s string) string {
	s = secrets.MaskText(strings.Join(strings.Fields(safetext.Line(s)), " "))
	if len(s) > maxAuditDetail {
		cut := maxAuditDetail
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
