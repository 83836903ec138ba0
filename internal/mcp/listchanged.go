package mcp

import (
	"sync"
	"sync/atomic"
	"time"
)

// toolChangeDelay is how long the server waits after a change of the tool
// registry before it sends notifications/tools/list_changed, restarting the
// wait at each further change: a burst (an upstream server reconnecting,
// re-announcing its tools) yields one notification. It is the delay the
// official Go SDK's server uses (notificationDelay in
// github.com/modelcontextprotocol/go-sdk mcp/server.go, 10 ms), so clients
// see the same behaviour from clawd as from an SDK server.
const toolChangeDelay = 10 * time.Millisecond

// toolChangeMaxDelay bounds how long changes arriving faster than
// toolChangeDelay can postpone the notification: the SDK restarts its wait
// without limit, so a provider flapping every few milliseconds would keep
// clients from ever hearing of it. Past this, the notification goes out and
// a new wait starts.
const toolChangeMaxDelay = 250 * time.Millisecond

// debouncer calls fire once after a burst of changed calls has been quiet
// for delay (or max after the burst's first change).
type debouncer struct {
	delay, max time.Duration
	fire       func()

	mu    sync.Mutex
	timer *time.Timer // pending, nil when none is
	first time.Time   // the pending burst's first change
}

func (d *debouncer) changed() {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if d.timer == nil {
		d.first = now
		d.timer = time.AfterFunc(d.delay, d.flush)
		return
	}
	if now.Add(d.delay).Sub(d.first) > d.max {
		return // the pending timer fires within max of the first change
	}
	// Stop reports false when the timer already fired and flush is about
	// to run: its notification is sent after this change was made, so it
	// covers it.
	if d.timer.Stop() {
		d.timer.Reset(d.delay)
	}
}

func (d *debouncer) flush() {
	d.mu.Lock()
	d.timer = nil
	d.mu.Unlock()
	d.fire()
}

// coalesced sends one receiver's list_changed on a goroutine of its own, so
// that a receiver that stops reading (its write waits up to the stream's
// stall limit, and a client that reads slowly can keep it waiting) holds up
// only its own notifications. A change made while a send is on its way
// costs one more send after it, never a queue of them: that one goes out
// after every change made meanwhile and covers them all.
type coalesced struct{ n atomic.Int32 } // sends asked for, the running one included

func (c *coalesced) run(send func()) {
	if c.n.Add(1) > 1 {
		return // the running sender sends once more
	}
	go func() {
		for {
			send()
			if c.n.CompareAndSwap(1, 0) {
				return
			}
			c.n.Store(1)
		}
	}()
}
