package mcp

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
)

// TestDebouncerCoalescesAndBounds: a burst fires once, after the burst;
// changes that never pause for the delay still fire every max, so a
// flapping provider cannot silence list_changed.
func TestDebouncerCoalescesAndBounds(t *testing.T) {
	var fired atomic.Int64
	d := &debouncer{delay: 10 * time.Millisecond, max: 100 * time.Millisecond, fire: func() { fired.Add(1) }}
	for range 1000 {
		d.changed()
	}
	waitFor(t, func() bool { return fired.Load() >= 1 })
	time.Sleep(50 * time.Millisecond)
	if n := fired.Load(); n != 1 {
		t.Errorf("a burst of 1000 changes fired %d times, want 1", n)
	}

	fired.Store(0)
	end := time.Now().Add(time.Second)
	for time.Now().Before(end) {
		d.changed()
		time.Sleep(2 * time.Millisecond) // always sooner than delay
	}
	if n := fired.Load(); n < 2 {
		t.Errorf("1 s of changes 2 ms apart fired %d times, want at least 2 (every max = 100 ms)", n)
	}
}

// TestStuckSessionHoldsUpNoOtherNotification: a legacy stream client that
// stops reading (its answer waits unwritten; a slow reader can keep it so
// for as long as it likes) delays only its own list_changed: other
// sessions and every subscription get theirs at once.
func TestStuckSessionHoldsUpNoOtherNotification(t *testing.T) {
	srv := testServer(&testChain{})
	// The stuck client: initialize is answered into a pipe nobody reads.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stuck := srv.NewSession(&chain.Caller{Transport: "unix", AuthMethod: "peercred", Kind: "local", Subject: "ws"}, SessionOptions{})
	done := make(chan error, 1)
	go func() { done <- stuck.serveStream(context.Background(), inR, outW, nil) }()
	t.Cleanup(func() {
		outR.Close() // the stuck write fails, the session ends
		inW.Close()
		<-done
	})
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`+"\n")
	waitFor(t, stuck.initialized)

	legacy := newHarness(t, srv)
	legacy.initialize("2025-11-25")
	legacy.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	legacy.recv()
	sub := newHarness(t, srv)
	sub.send(modernReq(`"s"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`, ""))
	sub.recv() // the acknowledgement

	go srv.NotifyToolsChanged()
	if n := sub.recv(); !strings.Contains(n, "notifications/tools/list_changed") {
		t.Errorf("subscription got %s", n)
	}
	if n := legacy.recv(); n != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Errorf("legacy session got %s", n)
	}
}
