package transport

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/clawde/clawd/internal/mcp"
)

// Session limits of the HTTP transport.
const (
	// DefaultMaxSessions caps the live Mcp-Session-Ids. At the cap, the
	// least recently used session with no request in flight of the
	// credential holding the most sessions is evicted; its client gets 404
	// on its next request and, per MCP, initializes again.
	DefaultMaxSessions = 256
	// DefaultSessionIdle expires a session no request has used for this
	// long. It is generous because an agent may sit idle for hours between
	// tool calls, and the cap above already bounds memory.
	DefaultSessionIdle = 8 * time.Hour
)

// sessionTable maps Mcp-Session-Id values to MCP sessions.
type sessionTable struct {
	mu   sync.Mutex
	m    map[string]*httpSession
	max  int
	idle time.Duration
	now  func() time.Time
}

type httpSession struct {
	id       string
	s        *mcp.Session
	ident    Identity  // the credential that started it; only it may use it
	lastUsed time.Time // guarded by the table's mu
	busy     int       // requests in flight; guarded by the table's mu
}

func newSessionTable(max int, idle time.Duration, now func() time.Time) *sessionTable {
	return &sessionTable{m: map[string]*httpSession{}, max: max, idle: idle, now: now}
}

// newSessionID returns 128 random bits as hex: visible ASCII, as MCP
// requires, and unguessable, since it routes requests to a session.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b[:])
}

// create registers s under a fresh id, busy (release it when the request
// ends). At the cap it first drops expired sessions, then evicts the least
// recently used idle session of the credential that holds the most; ok is
// false when every session is busy.
func (t *sessionTable) create(s *mcp.Session, ident Identity) (hs *httpSession, ok bool) {
	t.mu.Lock()
	var closed []*mcp.Session
	defer func() {
		t.mu.Unlock()
		for _, c := range closed {
			c.Close()
		}
	}()
	now := t.now()
	if len(t.m) >= t.max {
		closed = t.expireLocked(now)
	}
	if len(t.m) >= t.max {
		// The credential holding the most sessions (the new one counted
		// as its credential's) gives way, its least recently used idle
		// session first: a credential that opens sessions in a loop then
		// evicts its own, never every other client's.
		held := map[Identity]int{ident: 1}
		for _, x := range t.m {
			held[x.ident]++
		}
		var lru *httpSession
		for _, x := range t.m {
			if x.busy != 0 {
				continue
			}
			if lru == nil || held[x.ident] > held[lru.ident] ||
				held[x.ident] == held[lru.ident] && x.lastUsed.Before(lru.lastUsed) {
				lru = x
			}
		}
		if lru == nil {
			return nil, false
		}
		delete(t.m, lru.id)
		closed = append(closed, lru.s)
	}
	hs = &httpSession{id: newSessionID(), s: s, ident: ident, lastUsed: now, busy: 1}
	t.m[hs.id] = hs
	return hs, true
}

// acquire finds the session and marks a request in flight on it.
func (t *sessionTable) acquire(id string) (*httpSession, bool) {
	t.mu.Lock()
	hs, ok := t.m[id]
	if !ok {
		t.mu.Unlock()
		return nil, false
	}
	now := t.now()
	if hs.busy == 0 && now.Sub(hs.lastUsed) >= t.idle {
		// Expired but not swept yet.
		delete(t.m, id)
		t.mu.Unlock()
		hs.s.Close()
		return nil, false
	}
	hs.busy++
	hs.lastUsed = now
	t.mu.Unlock()
	return hs, true
}

// release ends a request on the session.
func (t *sessionTable) release(hs *httpSession) {
	t.mu.Lock()
	hs.busy--
	hs.lastUsed = t.now()
	t.mu.Unlock()
}

// remove deletes the session (DELETE, or a failed initialize) and closes
// it, cancelling its running calls. It reports whether the id was live.
func (t *sessionTable) remove(id string) bool {
	t.mu.Lock()
	hs, ok := t.m[id]
	delete(t.m, id)
	t.mu.Unlock()
	if ok {
		hs.s.Close()
	}
	return ok
}

// sweep closes the sessions idle for longer than the idle limit.
func (t *sessionTable) sweep() int {
	t.mu.Lock()
	closed := t.expireLocked(t.now())
	t.mu.Unlock()
	for _, s := range closed {
		s.Close()
	}
	return len(closed)
}

func (t *sessionTable) expireLocked(now time.Time) []*mcp.Session {
	var closed []*mcp.Session
	for id, x := range t.m {
		if x.busy == 0 && now.Sub(x.lastUsed) >= t.idle {
			delete(t.m, id)
			closed = append(closed, x.s)
		}
	}
	return closed
}

// closeAll ends every session (shutdown): running calls are cancelled.
func (t *sessionTable) closeAll() {
	t.mu.Lock()
	all := t.m
	t.m = map[string]*httpSession{}
	t.mu.Unlock()
	for _, x := range all {
		x.s.Close()
	}
}

func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
