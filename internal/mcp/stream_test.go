package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/tools"
)

// streamHarness runs a stream session over pipes and hands the test the
// harness and the session's stream.
func streamHarness(t *testing.T, srv *Server) (*harness, *stream) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, in: inW, lines: make(chan string, 1024), done: make(chan error, 1), cancel: cancel}
	go func() {
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				h.lines <- line
			}
			if err != nil {
				close(h.lines)
				return
			}
		}
	}()
	if tc, ok := srv.Chain.(*testChain); ok {
		h.chain = tc
	}
	got := make(chan *stream, 1)
	s := srv.NewSession(&chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "local", Subject: "ws"}, SessionOptions{})
	go func() {
		h.done <- s.serveStream(ctx, inR, outW, func(st *stream) { got <- st })
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		<-h.done
	})
	return h, <-got
}

// A client that waits for each answer has its calls run on the reader
// goroutine: no worker goroutine is started for them.
func TestSequentialCallsRunInline(t *testing.T) {
	h, st := streamHarness(t, testServer(&testChain{}))
	h.initialize("2025-06-18")
	for i := 0; i < 20; i++ {
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"i":1}}}`)
		if r := decode(t, h.recv()); r.Result == nil {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	if n := st.workers.live.Load(); n != 0 {
		t.Errorf("%d worker goroutines for sequential calls, want 0 (inline)", n)
	}
	if n := st.seq.Load(); n != 20 {
		t.Errorf("%d inline calls, want 20", n)
	}
	// With no more calls, the watcher forgets the stream and stops (the
	// server stops waking every inlineGrace).
	waitFor(t, func() bool {
		w := &st.s.srv.inline
		w.mu.Lock()
		defer w.mu.Unlock()
		return !st.watched.Load() && !w.running
	})
}

// A call that runs long on the reader goroutine does not hold up reading:
// another goroutine takes over, so a ping is answered and a cancel is
// seen while the call still runs.
func TestInlineCallHandsOverReading(t *testing.T) {
	tc := &testChain{}
	h, st := streamHarness(t, testServer(tc))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"block","arguments":{"tag":"c1"}}}`)
	waitStarted(t, "c1")
	if st.seq.Load() != 1 {
		t.Fatal("the call did not run inline")
	}
	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if r := decode(t, h.recv()); string(r.ID) != `"p"` {
		t.Fatalf("ping answered %s", r.ID)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}`)
	waitFor(t, func() bool { return tc.lastOutcome().Result == "cancelled" })
	// Reading goes on after the hand-over, inline again.
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)
	if r := decode(t, h.recv()); string(r.ID) != `2` || r.Result == nil {
		t.Fatalf("call after the hand-over: %+v", r)
	}
}

// Requests already buffered behind a call (a pipelining client) run
// concurrently on workers, not one after another on the reader.
func TestPipelinedCallsRunConcurrently(t *testing.T) {
	h, st := streamHarness(t, testServer(&testChain{}))
	h.initialize("2025-06-18")
	var b strings.Builder
	for _, tag := range []string{"a", "b", "c"} {
		b.WriteString(`{"jsonrpc":"2.0","id":"` + tag + `","method":"tools/call","params":{"name":"block","arguments":{"tag":"` + tag + `"}}}` + "\n")
	}
	if _, err := io.WriteString(h.in, b.String()); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(500 * time.Millisecond) // well under a hand-over per call
	for i := 0; i < 3; i++ {
		select {
		case <-started:
		case <-deadline:
			t.Fatalf("only %d of 3 pipelined calls started", i)
		}
	}
	if n := st.workers.live.Load(); n < 2 {
		t.Errorf("%d worker goroutines for 3 pipelined calls", n)
	}
}

// EOF read by the goroutine that took over still ends the session once the
// call running inline has answered.
func TestEOFAfterHandOver(t *testing.T) {
	release := make(chan struct{})
	slow := newFuncTool("slow", tools.PermRead, func(ctx context.Context, args jsontext.Value) (any, error) {
		started <- "slow"
		<-release
		return map[string]bool{"done": true}, nil
	})
	h, st := streamHarness(t, testServer(&testChain{}, slow))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	waitStarted(t, "slow")
	waitFor(t, func() bool { ic := st.inline.Load(); return ic != nil && ic.taken.Load() })
	h.in.Close()
	time.Sleep(10 * time.Millisecond) // let the new reader see EOF first
	close(release)
	if line := h.recv(); !strings.Contains(line, `"done":true`) {
		t.Fatalf("call did not answer: %s", line)
	}
	select {
	case err := <-h.done:
		h.done <- err
		if err != nil {
			t.Errorf("ServeStream = %v, want nil at EOF", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("session did not end after EOF")
	}
}

// An inline call whose answer cannot be written after the hand-over ends
// the session with ErrOutputClosed, although the goroutine reading now is
// blocked on an input that cannot be interrupted.
func TestOutputClosedAfterHandOver(t *testing.T) {
	release := make(chan struct{})
	slow := newFuncTool("slow", tools.PermRead, func(ctx context.Context, args jsontext.Value) (any, error) {
		started <- "slow"
		<-release
		return map[string]bool{"done": true}, nil
	})
	srv := testServer(&testChain{}, slow)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	s := srv.NewSession(&chain.Caller{AuthMethod: "spawn"}, SessionOptions{})
	got := make(chan *stream, 1)
	done := make(chan error, 1)
	go func() { done <- s.serveStream(context.Background(), inR, outW, func(st *stream) { got <- st }) }()
	st := <-got
	br := bufio.NewReader(outR)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	br.ReadString('\n')
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`+"\n")
	waitStarted(t, "slow")
	waitFor(t, func() bool { ic := st.inline.Load(); return ic != nil && ic.taken.Load() })
	outR.Close()
	close(release)
	select {
	case err := <-done:
		if !errors.Is(err, ErrOutputClosed) {
			t.Errorf("ServeStream = %v, want ErrOutputClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("session kept running after its output closed")
	}
}

// After a hand-over the call that outlived inlineGrace counts as running,
// so the next call goes to a worker at once instead of running inline and
// waiting for a hand-over of its own.
func TestCallAfterHandOverGoesToWorker(t *testing.T) {
	h, st := streamHarness(t, testServer(&testChain{}))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"block","arguments":{"tag":"a"}}}`)
	waitStarted(t, "a")
	waitFor(t, func() bool { return st.running.Load() == 1 })
	h.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block","arguments":{"tag":"b"}}}`)
	waitStarted(t, "b")
	if n := st.seq.Load(); n != 1 {
		t.Errorf("%d inline calls, want 1: the second call should have gone to a worker", n)
	}
	if n := st.workers.live.Load(); n != 1 {
		t.Errorf("%d workers, want 1", n)
	}
}
