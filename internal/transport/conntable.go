package transport

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connTable counts a listener's open connections against its cap and, when
// the cap is reached, decides which connection gives way to a new one.
//
// Why shedding instead of refusing: a cap that refuses new connections lets
// anyone who can open sockets (every local process) hold all the slots with
// connections that never send a byte, and then /health and authenticated
// clients get nothing but refusals. So at the cap the table closes the
// connection that matters least (rank, then the longest wait) and admits
// the new one; it refuses only when every slot does real work (a request of
// an authenticated HTTP client in progress, a socket session that has sent
// a message). The ranks are the table's rank function: the HTTP one in
// httpRank, the socket one in UnixServer.
//
// The table never holds more than max connections: a victim is counted out
// before the new connection is counted in.
type connTable struct {
	max  int
	rank func(tc *trackedConn, state int32, now int64) int // 0: never shed; higher: shed first
	// spare, when set, is asked about the connection rank chose, last: a
	// check too costly to run on every connection (a system call). True
	// keeps the connection this time. After spareTries connections spared
	// in one admission (0: no limit) the next choice is shed unasked, so a
	// flood of such connections cannot make each admission scan them all.
	spare      func(tc *trackedConn) bool
	spareTries int

	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

// Connection states. A connection is busy while the server works on a
// request whose head it has read, idle otherwise (no request yet, between
// keep-alive requests, or a socket client that has not sent its first line).
const (
	connIdle int32 = iota
	connBusy
	connClosed // closed: by its owner, or shed by the table
)

// trackedConn is a connection counted by a connTable. Close removes it.
type trackedConn struct {
	net.Conn
	table    *connTable
	accepted time.Time    // when it was accepted
	since    atomic.Int64 // monotime when the connection last became idle
	state    atomic.Int32
	// authed: an HTTP request on this connection presented a valid bearer
	// token (httpRank). Socket connections leave it unset.
	authed atomic.Bool
	// headDone: net/http has read a complete request head (HTTP only).
	headDone atomic.Bool
	// listening: the request in progress is an open subscription
	// (subscriptions/listen), which runs until its client ends it (HTTP
	// only; cleared when the next request begins).
	listening atomic.Bool
	closeOnce sync.Once
}

// monoEpoch anchors monotime: the table compares ages, which must not jump
// with the wall clock.
var monoEpoch = time.Now()

// monotime is a monotonic clock in nanoseconds.
func monotime() int64 { return int64(time.Since(monoEpoch)) }

// monoOf converts a time.Time read from time.Now (it carries a monotonic
// reading) to monotime without another clock read.
func monoOf(t time.Time) int64 { return int64(t.Sub(monoEpoch)) }

func newConnTable(max int, rank func(*trackedConn, int32, int64) int) *connTable {
	return &connTable{max: max, rank: rank, conns: make(map[*trackedConn]struct{}, max)}
}

// admit counts c in. At the cap it first closes the connection rank puts
// first (shedRank is its rank, for the caller's summary; 0 when none was
// shed); ok is false when no connection may be shed: the caller refuses c.
func (t *connTable) admit(c net.Conn) (tc *trackedConn, shedRank int, ok bool) {
	at := time.Now()
	now := monoOf(at)
	tc = &trackedConn{Conn: c, table: t, accepted: at}
	tc.since.Store(now)
	var shed *trackedConn
	t.mu.Lock()
	for len(t.conns) >= t.max {
		v, r := t.victimLocked(now)
		if v == nil {
			if len(t.conns) < t.max {
				break // closed connections were counted out meanwhile
			}
			t.mu.Unlock()
			return nil, 0, false
		}
		delete(t.conns, v)
		shed, shedRank = v, r
	}
	t.conns[tc] = struct{}{}
	t.mu.Unlock()
	if shed != nil {
		shed.closeOnce.Do(func() { shed.Conn.Close() })
	}
	return tc, shedRank, true
}

// victimLocked picks the connection to shed and marks it closed, so its
// owner can no longer mark it busy. Among equal ranks the one idle the
// longest goes first: a new client is the youngest and goes last.
func (t *connTable) victimLocked(now int64) (*trackedConn, int) {
	var spared map[*trackedConn]bool
	for {
		var best *trackedConn
		bestRank, bestState, bestSince := 0, int32(0), int64(0)
		for c := range t.conns {
			if spared[c] {
				continue
			}
			st := c.state.Load()
			if st == connClosed { // its Close has yet to take the lock
				delete(t.conns, c)
				continue
			}
			r := t.rank(c, st, now)
			if r == 0 || r < bestRank {
				continue
			}
			if s := c.since.Load(); best == nil || r > bestRank || s < bestSince {
				best, bestRank, bestState, bestSince = c, r, st, s
			}
		}
		if best == nil {
			return nil, 0
		}
		if t.spare != nil && (t.spareTries == 0 || len(spared) < t.spareTries) && t.spare(best) {
			if spared == nil {
				spared = map[*trackedConn]bool{}
			}
			spared[best] = true
			continue
		}
		// The owner may have changed the state since it was ranked (marked
		// it busy, say); then rank again.
		if best.state.CompareAndSwap(bestState, connClosed) {
			return best, bestRank
		}
	}
}

// busy marks a request in progress; false means the table shed the
// connection (it is closed).
func (c *trackedConn) busy() bool {
	return c.state.CompareAndSwap(connIdle, connBusy)
}

// idle marks the end of a request at now (monotime).
func (c *trackedConn) idle(now int64) {
	c.since.Store(now)
	c.state.CompareAndSwap(connBusy, connIdle)
}

// Close closes the connection and counts it out.
func (c *trackedConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.state.Store(connClosed)
		c.table.mu.Lock()
		delete(c.table.conns, c)
		c.table.mu.Unlock()
		err = c.Conn.Close()
	})
	return err
}

func (t *connTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// Shed ranks of HTTP connections (httpRank).
const (
	rankKeep         = iota // never shed
	rankListening           // authenticated, an open subscription in progress
	rankIdleAuthed          // authenticated, between requests
	rankBusyUnauthed        // unauthenticated, a request in progress
	rankIdleUnauthed        // unauthenticated, no request in progress
)

// httpSpareTries bounds the input checks of one HTTP admission.
const httpSpareTries = 8

// httpRank orders HTTP connections for shedding. A connection that has
// presented a valid bearer token keeps its slot while a request runs
// (a tool call may run for minutes); between requests it gives way, last
// of all, since its client reconnects. A connection that has not presented
// a token holds its slot only as long as nothing better needs it: without
// a token the only requests that get an answer are /health and refusals,
// which take microseconds unless the client stops reading or trickles a
// body, so even one "in progress" is shed (after those that are not).
// An open subscription (subscriptions/listen) is a request in progress
// that never ends by itself: were it kept like a tool call, one token
// holder could take every slot with them for as long as it liked (tool
// calls cannot: max_concurrency refuses them far below the cap). It gives
// way last of all, the one open the longest first; its client subscribes
// again.
func httpRank(c *trackedConn, state int32, _ int64) int {
	switch {
	case state == connClosed:
		return rankKeep
	case !c.authed.Load():
		if state == connIdle {
			return rankIdleUnauthed
		}
		return rankBusyUnauthed
	case state == connIdle:
		return rankIdleAuthed
	case c.listening.Load():
		return rankListening
	}
	return rankKeep
}

// trackedOf finds the trackedConn under a connection the health lane
// handed to net/http.
func trackedOf(c net.Conn) *trackedConn {
	switch c := c.(type) {
	case *trackedConn:
		return c
	case *bufferedConn:
		return trackedOf(c.Conn)
	}
	return nil
}
