package mcp

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// inflight tracks running requests by id value so notifications/cancelled
// can find them (docs/transports.md):
//
//   - a cancel matching exactly one active call cancels it; one matching two
//     or more active calls with the same id cancels none, since ids are
//     client-scoped and the collision means the caller cannot be sure which;
//   - with holdPending (HTTP, where a cancel may overtake its call on another
//     connection) a cancel for an unknown id is held for pendingTTL and the
//     first matching registration consumes it; repeating the cancel does
//     not extend its lifetime;
//   - a cancel for an id that completed within pendingTTL is dropped, so a
//     late cancel cannot poison the immediate reuse of that id;
//   - both the pending and the recent-completion sets hold at most
//     maxTracked entries: expired ones are pruned first, then the oldest.
type inflight struct {
	holdPending bool
	now         func() time.Time

	mu      sync.Mutex
	active  map[string][]*activeCall
	pending timedSet
	recent  timedSet
	// closed: cancelAll ran (the session ended). A call registered after
	// it (an HTTP request that found its session just before a DELETE) is
	// cancelled before it starts.
	closed bool
}

const (
	pendingTTL = 5 * time.Second
	maxTracked = 1024
	// maxHeldKey is the longest key a timedSet keeps as it is; a longer one
	// (an id the client made long) is kept as its SHA-256.
	maxHeldKey = 64
)

type activeCall struct {
	cancel context.CancelFunc
	ctx    context.Context
	// answered is set (under inflight.mu) when the call's answer is
	// decided; a cancel processed after that finds nothing to cancel.
	answered bool
}

func newInflight(holdPending bool) *inflight {
	return &inflight{
		holdPending: holdPending,
		now:         time.Now,
		active:      map[string][]*activeCall{},
		pending:     newTimedSet(),
		recent:      newTimedSet(),
	}
}

// register records a call under key and returns its context, a function to
// call when it finishes, and whether a held cancel already cancelled it.
// Before the call answers with anything but "cancelled", it must call
// commit (see inflight.commit).
func (r *inflight) register(parent context.Context, key string) (context.Context, func(), bool) {
	ctx, cancel := context.WithCancel(parent)
	c := &activeCall{cancel: cancel, ctx: ctx}
	r.mu.Lock()
	cancelled := false
	if r.closed {
		cancelled = true
		cancel()
	}
	if r.holdPending && !cancelled {
		r.recent.remove(key)
		if r.pending.take(key, r.now()) {
			cancelled = true
			cancel()
		}
	}
	r.active[key] = append(r.active[key], c)
	r.mu.Unlock()
	done := func() {
		cancel()
		r.mu.Lock()
		list := r.active[key]
		for i, x := range list {
			if x == c {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(r.active, key)
		} else {
			r.active[key] = list
		}
		if r.holdPending {
			r.recent.add(key, r.now())
		}
		r.mu.Unlock()
	}
	return ctx, done, cancelled
}

// commit decides, atomically with respect to cancel and cancelAll, how
// the call registered under key with context ctx ends: false if it was cancelled (by a
// cancel, the session ending or the transport's context), and the answer
// must then say so (or be omitted); true if not, and from then on a cancel
// finds the call already answered and changes nothing. This is what makes
// "a cancelled call never gets a result" hold even when the tool finished
// its work in the same instant the cancel was read.
func (r *inflight) commit(key string, ctx context.Context) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	for _, c := range r.active[key] {
		if c.ctx == ctx {
			c.answered = true
		}
	}
	return true
}

// cancel handles notifications/cancelled for key and reports whether an
// active call was cancelled.
func (r *inflight) cancel(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch list := r.active[key]; len(list) {
	case 1:
		if list[0].answered {
			return false // too late: its answer is already decided
		}
		list[0].cancel()
		return true
	case 0:
		now := r.now()
		if r.holdPending && !r.recent.has(key, now) {
			r.pending.add(key, now)
		}
		return false
	default:
		return false // ambiguous: cancel none
	}
}

// cancelAll cancels every active call and every call registered later
// (the session is ending).
func (r *inflight) cancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for _, list := range r.active {
		for _, c := range list {
			if !c.answered {
				c.cancel()
			}
		}
	}
}

// timedSet is a capped set of keys with insertion times, oldest first.
type timedSet struct {
	at    map[string]time.Time
	order []timedKey // insertion order; entries whose time no longer matches at are stale
}

type timedKey struct {
	key string
	t   time.Time
}

func newTimedSet() timedSet { return timedSet{at: map[string]time.Time{}} }

// heldKey is what a timedSet keeps for key: key itself, or for a long one
// its SHA-256 ("h:" and 32 bytes; other keys begin "s:", "n:" or "r:").
// Entries outlive their requests, so their size must not be the client's
// choice: cancels for 4 MB ids held gigabytes.
func heldKey(key string) string {
	if len(key) <= maxHeldKey {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "h:" + string(sum[:])
}

func (s *timedSet) has(key string, now time.Time) bool { return s.hasHeld(heldKey(key), now) }

func (s *timedSet) hasHeld(k string, now time.Time) bool {
	t, ok := s.at[k]
	return ok && now.Sub(t) < pendingTTL
}

// add inserts key unless it is present and unexpired (no lifetime extension).
func (s *timedSet) add(key string, now time.Time) {
	k := heldKey(key)
	if s.hasHeld(k, now) {
		return
	}
	s.prune(now)
	for len(s.at) >= maxTracked {
		s.evictOldest()
	}
	s.at[k] = now
	s.order = append(s.order, timedKey{k, now})
}

// take removes key and reports whether it was present and unexpired.
func (s *timedSet) take(key string, now time.Time) bool {
	k := heldKey(key)
	ok := s.hasHeld(k, now)
	delete(s.at, k)
	return ok
}

func (s *timedSet) remove(key string) { delete(s.at, heldKey(key)) }

func (s *timedSet) live(e timedKey) bool {
	t, ok := s.at[e.key]
	return ok && t.Equal(e.t)
}

// prune drops expired entries from the front of the order.
func (s *timedSet) prune(now time.Time) {
	i := 0
	for ; i < len(s.order); i++ {
		e := s.order[i]
		if !s.live(e) {
			continue
		}
		if now.Sub(e.t) < pendingTTL {
			break
		}
		delete(s.at, e.key)
	}
	s.order = s.order[i:]
	if cap(s.order) > 4*maxTracked && len(s.order) < maxTracked {
		s.order = append([]timedKey(nil), s.order...)
	}
}

func (s *timedSet) evictOldest() {
	for len(s.order) > 0 {
		e := s.order[0]
		s.order = s.order[1:]
		if s.live(e) {
			delete(s.at, e.key)
			return
		}
	}
}
