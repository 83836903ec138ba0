//go:build unix

package upstream

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// A server that sends requests without end and never reads clawd's answers
// (its stdin pipe fills) must not make clawd hold a goroutine, and the
// memory of an answer, per request: clawd's memory would grow with the
// flood until the daemon, and every client's session with it, died. And
// stopping such a server must not wait for those answers (a minute each).
// Not parallel: it counts the process's goroutines.
func TestServerRequestFloodIsBounded(t *testing.T) {
	m, _ := newTestManager(t, Options{})
	before := runtime.NumGoroutine()
	const flood = 20000
	m.Apply(context.Background(), []ServerConfig{fake("flood", "-ping-flood", "20000")})
	connected(t, m, "flood")
	// Give clawd the time to read the whole flood (about 1 MB).
	peak := 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		peak = max(peak, runtime.NumGoroutine()-before)
	}
	if peak > 500 {
		t.Errorf("clawd held %d more goroutines while a server sent %d requests it never read the answers to; want a bound well under 500", peak, flood)
	}
	// About 100 ms; the bound is far above it and far below the minute an
	// unread answer would hold Close up.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	if err := m.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("stopping the server took %v; its unread answers must not hold it up", took)
	}
}
