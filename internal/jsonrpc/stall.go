package jsonrpc

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// writeDeadliner is a writer whose blocked Write can be ended by a deadline
// (a socket, a pipe in the network poller).
type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// stallGuard ends a Write that has waited longer than limit for the peer to
// read: a peer that stops reading (a stuck client, or one that sends
// requests and never reads the answers) would otherwise hold the goroutine
// writing, and everything queued behind it, for as long as it lives.
//
// A write here is one chunk of at most stallChunk bytes (stallWriter), so
// what is bounded is a wait for the peer to read, not how long a large
// answer takes to go out at the pace of a peer that does read.
//
// It costs no timer per write, and needs no stopping: the timer runs only
// while a write is in progress or once after. One timer is armed by the
// first write after an idle spell and, when it fires, either finds no write
// in progress and stays unarmed, or re-arms for the rest of the current
// write's allowance.
// A write that outlasts limit gets a deadline in the past: it and every
// later write fail, which ends the session.
type stallGuard struct {
	limit time.Duration
	dl    writeDeadliner
	base  time.Time // started values are monotonic offsets from base

	started atomic.Int64 // offset+1 of the write in progress; 0 when none
	armed   atomic.Bool

	mu      sync.Mutex // serializes arming with the timer's own check
	timer   *time.Timer
	tripped atomic.Bool // a write outlasted limit; never armed again
}

func newStallGuard(dl writeDeadliner, limit time.Duration) *stallGuard {
	g := &stallGuard{limit: limit, dl: dl, base: time.Now()}
	g.timer = time.AfterFunc(time.Hour, g.check)
	g.timer.Stop()
	return g
}

// begin marks a write as started and makes sure the timer watches it.
func (g *stallGuard) begin() {
	g.started.Store(int64(time.Since(g.base)) + 1)
	if g.armed.Load() {
		return // check runs later and reads started after clearing armed
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.armed.Load() && !g.tripped.Load() {
		g.armed.Store(true)
		g.timer.Reset(g.limit)
	}
}

// shorten lowers the limit to d for the writes to come and the one in
// progress (whose allowance is then counted from its start).
func (g *stallGuard) shorten(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d >= g.limit {
		return
	}
	g.limit = d
	if g.armed.Load() {
		g.timer.Reset(0) // check re-arms for what is left of the new limit
	}
}

// end marks the write as finished.
func (g *stallGuard) end() { g.started.Store(0) }

// check is the timer: it trips the guard when the write in progress has
// waited limit, re-arms while one is in progress, and otherwise lets the
// next begin arm it. armed is cleared before started is read, so a write
// that begins meanwhile is either seen here or arms the timer itself.
func (g *stallGuard) check() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed.Store(false)
	s := g.started.Load()
	if s == 0 || g.tripped.Load() {
		return
	}
	waited := time.Since(g.base) - time.Duration(s-1)
	if waited >= g.limit {
		g.tripped.Store(true)
		g.dl.SetWriteDeadline(time.Unix(1, 0)) // in the past: the write returns now
		return
	}
	g.armed.Store(true)
	g.timer.Reset(g.limit - waited)
}

// stallChunk is the most stallWriter hands its writer at once: the size of
// a pipe's buffer on Linux, and of Stream's write buffer.
const stallChunk = 64 << 10

// stallWriter writes through a stallGuard, in chunks of at most
// stallChunk bytes, each with the guard's whole allowance: a peer must take
// 64 KiB within the limit, not a whole answer of megabytes (a client
// behind a slow link reads steadily and would otherwise lose its session
// on a large answer).
type stallWriter struct {
	w io.Writer
	g *stallGuard
}

func (sw stallWriter) Write(p []byte) (n int, err error) {
	for len(p) > 0 {
		c := p[:min(len(p), stallChunk)]
		sw.g.begin()
		m, err := sw.w.Write(c)
		sw.g.end()
		n += m
		if err != nil {
			return n, err
		}
		if m < len(c) {
			return n, io.ErrShortWrite
		}
		p = p[m:]
	}
	return n, nil
}
