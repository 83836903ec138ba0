package mcp

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
)

// TestCallLimitSpansSessions: max_concurrency bounds tools/call over all
// sessions of a server (the config's "per server"), not per session: a
// second session's call waits while the first holds the only slot, and runs
// once it is free.
func TestCallLimitSpansSessions(t *testing.T) {
	srv := testServer(&testChain{})
	srv.MaxConcurrency = 1
	a, b := newHarness(t, srv), newHarness(t, srv)
	a.initialize("2025-06-18")
	b.initialize("2025-06-18")
	a.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"block","arguments":{"tag":"a"}}}`)
	waitStarted(t, "a")
	b.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block","arguments":{"tag":"b"}}}`)
	select {
	case tag := <-started:
		t.Fatalf("call %s started in another session while the only slot was taken", tag)
	case <-time.After(150 * time.Millisecond):
	}
	// Control messages never wait for a slot.
	b.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if r := decode(t, b.recv()); string(r.ID) != `"p"` {
		t.Fatalf("ping answered %s", r.ID)
	}
	a.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`)
	waitStarted(t, "b")
	b.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`)
	waitFor(t, func() bool { return srv.limiter().inUse() == 0 })
}

// TestHandleBusy: Handle (HTTP) does not wait for a slot: a tools/call that
// finds them all taken, by any session, gets a *BusyError naming the limit,
// other methods pass, and a batch takes all its slots or none.
func TestHandleBusy(t *testing.T) {
	srv := testServer(&testChain{})
	srv.MaxConcurrency = 2
	stream := newHarness(t, srv)
	stream.initialize("2025-06-18")
	stream.send(`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"block","arguments":{"tag":"s"}}}`)
	waitStarted(t, "s")

	ctx := context.Background()
	s := srv.NewSession(&chain.Caller{Transport: "http", AuthMethod: "bearer", Kind: "local", Subject: "ws"},
		SessionOptions{HoldPendingCancels: true, ReplyToCancelled: true})
	defer s.Close()
	handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`))
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}]`
	if got := string(handleBody(s, ctx, []byte(batch))); !strings.Contains(got, "2 tool calls are already running (max_concurrency)") {
		t.Errorf("a batch of 2 calls with 1 slot free: %s, want the busy refusal", got)
	}
	if n := srv.limiter().inUse(); n != 1 {
		t.Errorf("after the refused batch %d slots are taken, want 1 (all or none)", n)
	}
	if got := string(handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"k":1}}}`))); !strings.Contains(got, `"id":3`) || !strings.Contains(got, `"isError":false`) {
		t.Errorf("one call with one slot free: %s", got)
	}
	stream.send(`{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"block","arguments":{"tag":"s2"}}}`)
	waitStarted(t, "s2")
	msg := mustParse(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`)
	_, err := s.Handle(ctx, &msg)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Limit != 2 {
		t.Errorf("a call with every slot taken: %v, want *BusyError{Limit: 2}", err)
	}
	ping := mustParse(t, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if out, err := s.Handle(ctx, &ping); err != nil || !strings.Contains(string(out), `"result":{}`) {
		t.Errorf("ping with every slot taken: %s, %v", out, err)
	}
	stream.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s"}}`)
	stream.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s2"}}`)
	waitFor(t, func() bool { return srv.limiter().inUse() == 0 })
}

// TestLimiterWaitersInOrderAndCancel: a freed slot goes to the oldest
// waiter, and a waiter whose context ends leaves without taking a slot.
func TestLimiterWaitersInOrderAndCancel(t *testing.T) {
	l := &callLimiter{max: 1}
	if !l.acquire(context.Background()) {
		t.Fatal("first acquire failed")
	}
	order := make(chan int, 2)
	for i := range 2 {
		go func() {
			if l.acquire(context.Background()) {
				order <- i
			}
		}()
		waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.waiters) == i+1 })
	}
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan bool)
	go func() { gone <- l.acquire(ctx) }()
	waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.waiters) == 3 })
	cancel()
	if <-gone {
		t.Fatal("a cancelled waiter got a slot")
	}
	l.release(1)
	if first := <-order; first != 0 {
		t.Errorf("slot went to waiter %d, want the oldest (0)", first)
	}
	l.release(1)
	<-order
	l.release(1)
	if n := l.inUse(); n != 0 {
		t.Errorf("%d slots taken after every release, want 0", n)
	}
	if !l.tryAcquire(1) || l.tryAcquire(1) {
		t.Error("tryAcquire does not respect the limit")
	}
}

// TestLimitsDefaultToConfig: config is the one source of the defaults.
func TestLimitsDefaultToConfig(t *testing.T) {
	var srv Server
	if got, want := srv.CallLimit(), config.Default().MaxConcurrency; got != want {
		t.Errorf("CallLimit = %d, want config's %d", got, want)
	}
	if got, want := srv.MessageLimit(), config.Default().MaxMessageBytes; got != want {
		t.Errorf("MessageLimit = %d, want config's %d", got, want)
	}
	srv.MaxConcurrency, srv.MaxMessageBytes = 3, 5000
	if srv.CallLimit() != 3 || srv.MessageLimit() != 5000 {
		t.Errorf("configured limits not used: %d %d", srv.CallLimit(), srv.MessageLimit())
	}
}

// TestHandleBatchRefusedBeforeSlots: over HTTP (Handle) a batch that is
// refused whole gets its refusal, not a busy error: one of more than
// maxBatchItems messages gets the -32600 naming that bound, and one whose
// tools/call requests outnumber max_concurrency (they take their slots at
// once, so they never could) gets a -32600 naming max_concurrency, where
// both were answered busy on every retry. Neither takes a slot.
func TestHandleBatchRefusedBeforeSlots(t *testing.T) {
	srv := testServer(&testChain{})
	srv.MaxConcurrency = 2
	ctx := context.Background()
	s := srv.NewSession(&chain.Caller{Transport: "http", AuthMethod: "bearer", Kind: "local", Subject: "ws"},
		SessionOptions{HoldPendingCancels: true, ReplyToCancelled: true})
	defer s.Close()
	handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`))
	calls := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"echo"}}`
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	for _, c := range []struct {
		n    int
		want string
	}{
		{maxBatchItems + 1, "at most " + strconv.Itoa(maxBatchItems) + " messages"},
		{3, "at most max_concurrency (2)"},
	} {
		got := string(handleBody(s, ctx, []byte(calls(c.n))))
		if !strings.Contains(got, `"code":-32600`) || !strings.Contains(got, c.want) {
			t.Errorf("a batch of %d calls with max_concurrency 2: %.300s, want -32600 naming %q", c.n, got, c.want)
		}
		if n := srv.limiter().inUse(); n != 0 {
			t.Errorf("after the refused batch of %d %d slots are taken, want 0", c.n, n)
		}
	}
	if got := string(handleBody(s, ctx, []byte(calls(2)))); strings.Count(got, `"isError":false`) != 2 {
		t.Errorf("a batch of 2 calls with 2 slots free: %.300s", got)
	}
}
