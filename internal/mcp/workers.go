package mcp

import (
	"sync"
	"sync/atomic"
)

// maxIdleWorkers is how many finished tools/call goroutines a stream session
// keeps waiting for the next call.
const maxIdleWorkers = 4

// callWorkers runs a stream session's tools/call handlers on goroutines
// that outlive one call. A fresh goroutine starts with a small stack and
// grows it (copying it each time it doubles) on every call that goes deep,
// as the chain, the handler and the result encoding do; a worker that waits
// for the next call keeps its grown stack. Dispatch never waits: with no idle
// worker it starts a goroutine, so calls still run concurrently and the
// reader stays free for cancellations. The most recently idle worker is
// reused first (its stack and caches are the warmest).
type callWorkers struct {
	mu     sync.Mutex
	idle   []chan func() // each idle worker's own channel, most recent last
	closed bool

	live atomic.Int32 // worker goroutines running or idle (for tests)
}

// run runs f on an idle worker, or on a new goroutine if none is idle.
func (p *callWorkers) run(f func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		ch := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		ch <- f // buffered: never blocks
		return
	}
	p.mu.Unlock()
	p.live.Add(1)
	go p.work(f)
}

// work runs f, then waits for more work while fewer than maxIdleWorkers are
// idle and the session is open.
func (p *callWorkers) work(f func()) {
	defer p.live.Add(-1)
	ch := make(chan func(), 1)
	for f != nil {
		f()
		f = nil // drop the finished call's references while idle
		p.mu.Lock()
		if p.closed || len(p.idle) >= maxIdleWorkers {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, ch)
		p.mu.Unlock()
		f = <-ch // nil: closed
	}
}

// close ends the idle workers; busy ones end after their call.
func (p *callWorkers) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, ch := range p.idle {
		close(ch)
	}
	p.idle = nil
}
