package transport

import (
	"log/slog"
	"sync"
	"time"
)

// connLogInterval is the least time between two summary lines of a
// connLog.
const connLogInterval = 10 * time.Second

// connLog counts what a listener did to connections at its cap (refused
// them, shed one for another, closed one that sent no request in time), or
// the requests the HTTP checks refused, and logs the counts as one line at
// most every interval, never a line per connection or request: whoever can
// open sockets could otherwise grow the log by a line per connect. The first event after a quiet interval is logged at
// once; events in the interval after it are summed into the next line,
// written when the interval has passed (or when the server stops).
type connLog struct {
	log      *slog.Logger
	msg      string
	names    []string // one per counter, the attribute names of the line
	attrs    []any    // constant attributes (the cap)
	interval time.Duration

	mu      sync.Mutex
	counts  []int64
	last    time.Time   // when the last line was written
	pending *time.Timer // writes the next line; nil when none is due
	stopped bool
}

func newConnLog(log *slog.Logger, interval time.Duration, msg string, attrs []any, names ...string) *connLog {
	if interval <= 0 {
		interval = connLogInterval
	}
	return &connLog{log: log, msg: msg, names: names, attrs: attrs, interval: interval, counts: make([]int64, len(names))}
}

// add counts one event of kind i (an index into the names).
func (l *connLog) add(i int) { l.addDetail(i, "") }

// addDetail is add for an event worth a line of its own: when a line is
// due now, the event gets msg with attrs (its details) instead of a count;
// otherwise it is counted into the next summary line.
func (l *connLog) addDetail(i int, msg string, attrs ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	due := l.pending == nil && time.Since(l.last) >= l.interval
	if due && msg != "" {
		l.log.Warn(msg, attrs...)
		l.last = time.Now()
		return
	}
	l.counts[i]++
	switch {
	case due:
		l.writeLocked()
	case l.pending == nil:
		l.pending = time.AfterFunc(l.interval-time.Since(l.last), l.flush)
	}
}

func (l *connLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = nil
	l.writeLocked()
}

// stop writes what is counted and not yet logged; later events are
// dropped (the server has stopped).
func (l *connLog) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending != nil {
		l.pending.Stop()
		l.pending = nil
	}
	l.writeLocked()
	l.stopped = true
}

func (l *connLog) writeLocked() {
	some := false
	args := append([]any(nil), l.attrs...)
	for i, n := range l.counts {
		some = some || n > 0
		args = append(args, l.names[i], n)
		l.counts[i] = 0
	}
	if !some {
		return
	}
	args = append(args, "interval", l.interval)
	l.log.Warn(l.msg, args...)
	l.last = time.Now()
}
