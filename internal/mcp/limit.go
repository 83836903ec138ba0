package mcp

import (
	"context"
	"strconv"
	"sync"

	"github.com/clawde/clawd/internal/jsonrpc"
)

// callLimiter bounds the tools/call handlers running at once over all of a
// server's sessions (max_concurrency: "tool calls that may run at once per
// server"; docs/transports.md). Only tools/call counts: pings, cancels and
// every other method never wait for a slot, so a client whose calls hold
// every slot can still cancel them.
//
// A stream session's call waits for a slot (on its own goroutine, never the
// reader's for long: the inline hand-over in stream.go applies), so a busy
// server queues calls in the order they asked. An HTTP request does not
// wait: Session.Handle takes every slot its message needs at once or none,
// and the transport answers 503.
type callLimiter struct {
	max int

	mu      sync.Mutex
	n       int             // slots taken
	waiters []chan struct{} // blocked acquirers, oldest first
}

// acquire takes one slot, waiting while all are taken; false when ctx ended
// first (the slot is then not held).
func (l *callLimiter) acquire(ctx context.Context) bool {
	l.mu.Lock()
	if l.n < l.max {
		l.n++
		l.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	l.waiters = append(l.waiters, ch)
	l.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	}
	l.mu.Lock()
	for i, w := range l.waiters {
		if w == ch {
			l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
			l.mu.Unlock()
			return false
		}
	}
	l.mu.Unlock()
	// A release handed this waiter its slot as ctx ended: give it on.
	l.release(1)
	return false
}

// tryAcquire takes k slots if that many are free, else none.
func (l *callLimiter) tryAcquire(k int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n+k > l.max {
		return false
	}
	l.n += k
	return true
}

// release gives back k slots, each to the oldest waiter if any: a waiter
// takes the slot over, so the count stays and no newcomer can jump ahead.
func (l *callLimiter) release(k int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ; k > 0; k-- {
		if len(l.waiters) > 0 {
			close(l.waiters[0])
			l.waiters = l.waiters[1:]
			continue
		}
		l.n--
	}
}

// inUse reports the slots taken (for tests).
func (l *callLimiter) inUse() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// minStreamCalls is the least maxStreamCalls allows on one stream.
const minStreamCalls = 32

// maxStreamCalls bounds the calls one stream connection (stdio, the unix
// socket) may have in progress beside its reader: running, waiting for a
// max_concurrency slot, or holding an answer the client has not read yet.
// A batch counts its requests: they run at once, and its one answer holds
// all of theirs (a batch with no call or extension request in it is
// answered on the reader and counts nothing); an extension request counts
// as a call (stream.handle runs it like one). At the bound the reader
// waits for one to end before it reads on (stream.reserve). Without it, a
// client that sends calls and never reads the answers makes clawd hold
// every request and answer in memory, without end. Twice max_concurrency,
// at least minStreamCalls: more would only wait for a slot.
func (srv *Server) maxStreamCalls() int32 {
	return int32(max(minStreamCalls, 2*srv.CallLimit()))
}

// maxBatchItems bounds the messages of one JSON-RPC batch (protocol
// versions before 2025-06-18): the batch's answer is one message holding
// every item's answer, so a batch of many small requests (tools/list
// repeated) could otherwise ask for an answer of gigabytes.
const maxBatchItems = jsonrpc.MaxBatchItems

// BusyError is Session.Handle's refusal of a message whose tools/call
// requests find fewer than that many free slots.
type BusyError struct {
	Limit int // max_concurrency
}

func (e *BusyError) Error() string {
	return "service unavailable: " + strconv.Itoa(e.Limit) + " tool calls are already running (max_concurrency); retry later"
}

// slotsHeld marks a context whose tools/call slots the caller took already
// (Session.Handle), so callTool does not take another.
type slotsHeld struct{}

// acquireCall takes a tools/call slot for a call with context ctx, unless
// its caller holds one already. own reports that it took one (give it back
// with releaseCall); ok is false when ctx ended while waiting.
func (srv *Server) acquireCall(ctx context.Context) (own, ok bool) {
	if ctx.Value(slotsHeld{}) != nil {
		return false, true
	}
	if !srv.limiter().acquire(ctx) {
		return false, false
	}
	return true, true
}

// releaseCall gives back the slot acquireCall took when own.
func (srv *Server) releaseCall(own bool) {
	if own {
		srv.limiter().release(1)
	}
}

// countCalls is how many tools/call requests msg carries (a batch may carry
// several); each needs a slot.
func countCalls(msg *jsonrpc.Message) int {
	isCall := func(m *jsonrpc.Message) bool {
		return m.Method == "tools/call" && !m.IsResponse && !m.IsNotification()
	}
	if msg.Batch == nil {
		if isCall(msg) {
			return 1
		}
		return 0
	}
	n := 0
	for i := range msg.Batch.Items {
		if it := &msg.Batch.Items[i]; it.Err == nil && isCall(&it.Msg) {
			n++
		}
	}
	return n
}
