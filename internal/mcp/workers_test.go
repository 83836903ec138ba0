package mcp

import (
	"sync"
	"testing"
	"time"
)

func (p *callWorkers) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Sequential calls reuse one goroutine.
func TestCallWorkersReuse(t *testing.T) {
	p := &callWorkers{}
	defer p.close()
	for i := 0; i < 50; i++ {
		done := make(chan struct{})
		p.run(func() { close(done) })
		<-done
		waitFor(t, func() bool { return p.idleCount() == 1 })
	}
	if n := p.live.Load(); n != 1 {
		t.Errorf("%d worker goroutines for 50 sequential calls, want 1", n)
	}
}

// Dispatch never waits for a busy worker: a call blocked in its handler
// does not delay the next one.
func TestCallWorkersConcurrent(t *testing.T) {
	p := &callWorkers{}
	defer p.close()
	release := make(chan struct{})
	started := make(chan int, 3)
	for i := 0; i < 3; i++ {
		p.run(func() { started <- i; <-release })
	}
	for i := 0; i < 3; i++ {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of 3 calls started while the others were blocked", i)
		}
	}
	close(release)
}

// After a burst, at most maxIdleWorkers stay; close ends them.
func TestCallWorkersIdleCapAndClose(t *testing.T) {
	p := &callWorkers{}
	const n = maxIdleWorkers + 5
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		p.run(func() { defer wg.Done(); <-release })
	}
	if got := p.live.Load(); got != n {
		t.Fatalf("%d workers for %d concurrent calls", got, n)
	}
	close(release)
	wg.Wait()
	waitFor(t, func() bool { return p.live.Load() == maxIdleWorkers })
	if got := p.idleCount(); got != maxIdleWorkers {
		t.Errorf("%d idle workers, want %d", got, maxIdleWorkers)
	}
	p.close()
	waitFor(t, func() bool { return p.live.Load() == 0 })
}

// A call still running at close finishes, and its worker then exits
// instead of waiting for work that will not come.
func TestCallWorkersBusyAtClose(t *testing.T) {
	p := &callWorkers{}
	release, finished := make(chan struct{}), make(chan struct{})
	p.run(func() { <-release; close(finished) })
	p.close()
	close(release)
	<-finished
	waitFor(t, func() bool { return p.live.Load() == 0 })
}
