package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
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

// An answer that cannot be written ends the session with ErrOutputClosed,
// although the goroutine reading is blocked on an input that cannot be
// interrupted (as a terminal's is): an inline call's answer after the
// watcher handed reading over, and a worker's answer while the reader (never
// handed over) waits.
func TestOutputClosedWhileReadBlocked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls string // sent in one write
		n     int    // calls that start
		ready func(*stream) bool
	}{
		{"inline call handed over", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}` + "\n", 1,
			func(st *stream) bool { ic := st.inline.Load(); return ic != nil && ic.taken.Load() }},
		// Two calls in one write: both go to workers (more input is
		// buffered behind the first, and the first runs beside the reader).
		{"worker calls", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow"}}` + "\n" +
			`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"slow"}}` + "\n", 2,
			func(st *stream) bool { return st.seq.Load() == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
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
			io.WriteString(inW, tc.calls)
			for i := 0; i < tc.n; i++ {
				waitStarted(t, "slow")
			}
			waitFor(t, func() bool { return tc.ready(st) })
			outR.Close() // the answers cannot be written; the input stays open
			close(release)
			select {
			case err := <-done:
				if !errors.Is(err, ErrOutputClosed) {
					t.Errorf("ServeStream = %v, want ErrOutputClosed", err)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("session kept waiting on its input after its output failed")
			}
		})
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

// holdTool is a tool "hold" whose calls end when release is closed (ok)
// or their context ends.
func holdTool(release chan struct{}) tools.Tool {
	return newFuncTool("hold", tools.PermExecute, func(ctx context.Context, _ jsontext.Value) (any, error) {
		select {
		case <-release:
			return map[string]any{"ok": true}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}

// TestStreamCallBound: a stream client that sends calls without waiting
// for their answers has at most maxStreamCalls of them in progress (a
// batch counted by its messages): the reader stops reading until one ends, so
// what the client sends next waits in the input, and as calls end the rest
// are read and run. Without the bound clawd would hold every request and
// answer of a client that does not read.
func TestStreamCallBound(t *testing.T) {
	release := make(chan struct{})
	hold := holdTool(release)
	srv := testServer(&testChain{}, hold)
	srv.MaxConcurrency = 2 // most calls wait for a slot: they count all the same
	limit := int(srv.maxStreamCalls())
	if limit != minStreamCalls {
		t.Fatalf("maxStreamCalls = %d with max_concurrency 2, want %d", limit, minStreamCalls)
	}
	h, st := streamHarness(t, srv)
	h.initialize("2025-03-26") // batches allowed
	var b strings.Builder
	for i := 0; i < limit+3; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold"}}`+"\n", i)
	}
	b.WriteString(`[{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"hold"}},{"jsonrpc":"2.0","id":"b2","method":"ping"}]` + "\n")
	b.WriteString(`{"jsonrpc":"2.0","id":"p","method":"ping"}` + "\n")
	go io.WriteString(h.in, b.String()) // blocks once clawd stops reading
	waitFor(t, func() bool { return st.running.Load() == int32(limit) })
	select {
	case line := <-h.lines:
		t.Fatalf("answered %s with %d calls in progress; the reader should be waiting for room", line, limit)
	case <-time.After(200 * time.Millisecond):
	}
	if n := st.running.Load(); n != int32(limit) {
		t.Fatalf("%d calls in progress, want the bound %d", n, limit)
	}
	// As calls end, the rest are read: every call is answered, then the ping.
	close(release)
	seen := map[string]bool{}
	for len(seen) < limit+3+2 {
		line := h.recv()
		if strings.HasPrefix(line, "[") { // the batch's answer
			if !strings.Contains(line, `"id":"b1","result"`) || !strings.Contains(line, `"id":"b2","result"`) {
				t.Fatalf("batch answered %s", line)
			}
			seen["batch"] = true
			continue
		}
		r := decode(t, line)
		if r.Error != nil {
			t.Fatalf("answer %s: %+v", r.ID, r.Error)
		}
		seen[string(r.ID)] = true
	}
	if !seen[`"p"`] || !seen["batch"] {
		t.Fatalf("answers %v: the batch or the ping is missing", seen)
	}
	waitFor(t, func() bool { return st.running.Load() == 0 })
}

// TestBatchItemBound: a batch carries at most maxBatchItems messages; one
// more and the whole batch is refused, naming the bound.
func TestBatchItemBound(t *testing.T) {
	h, _ := streamHarness(t, testServer(&testChain{}))
	h.initialize("2025-03-26")
	batch := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"ping"}`
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	h.send(batch(maxBatchItems))
	if got := h.recv(); !strings.HasPrefix(got, "[") || strings.Count(got, `"result"`) != maxBatchItems {
		t.Fatalf("batch of %d: %.200s", maxBatchItems, got)
	}
	h.send(batch(maxBatchItems + 1))
	r := decode(t, h.recv())
	if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "at most "+strconv.Itoa(maxBatchItems)+" messages") {
		t.Fatalf("batch of %d: %+v, want -32600 naming the bound", maxBatchItems+1, r)
	}
}

// TestStreamRefusedBatchDoesNotWait: a batch refused whole (more than
// maxBatchItems messages) is answered at once, also while the stream's
// calls are at the bound: it runs nothing, so it has no room to wait for.
// It used to count its calls first and, being larger than the bound, wait
// until every call in progress had ended.
func TestStreamRefusedBatchDoesNotWait(t *testing.T) {
	release := make(chan struct{})
	hold := holdTool(release)
	srv := testServer(&testChain{}, hold)
	srv.MaxConcurrency = 2
	h, st := streamHarness(t, srv)
	h.initialize("2025-03-26")
	defer close(release)
	h.send(`{"jsonrpc":"2.0","id":"first","method":"tools/call","params":{"name":"hold"}}`)
	waitFor(t, func() bool { return st.inlineRunning() || st.running.Load() > 0 })
	items := make([]string, maxBatchItems+1)
	for i := range items {
		items[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"hold"}}`
	}
	h.send("[" + strings.Join(items, ",") + "]")
	select {
	case line := <-h.lines:
		r := decode(t, line)
		if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "at most "+strconv.Itoa(maxBatchItems)+" messages") {
			t.Fatalf("oversized batch answered %.300s, want -32600 naming the bound", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an oversized batch was not answered while a call was in progress")
	}
	if n := st.running.Load(); n > 1 {
		t.Fatalf("%d calls counted in progress after the refused batch, want at most the held one", n)
	}
}

// TestStreamBatchCountsItsMessages: a batch of tools/list is not a free
// pass past the stream's bound: its messages run at once and the answer
// holds all their answers, so a client that sends such batches and never
// reads would otherwise have maxStreamCalls batches, each of maxBatchItems
// answers, in progress. (Without a call in it, such a batch is answered on
// the reader, which then waits for the client to read it; a batch with a
// call counts each of its requests against the bound.)
func TestStreamBatchCountsItsMessages(t *testing.T) {
	srv := testServer(&testChain{})
	limit := int(srv.maxStreamCalls())
	const perBatch, batches = 8, 40
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // read for initialize only: then nobody reads
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	s := srv.NewSession(&chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "local", Subject: "ws"}, SessionOptions{})
	go func() { done <- s.serveStream(ctx, inR, outW, nil) }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	})
	io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	if line, err := bufio.NewReader(outR).ReadString('\n'); err != nil || !strings.Contains(line, `"result"`) {
		t.Fatalf("initialize: %q, %v", line, err)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	items := make([]string, perBatch)
	for i := range items {
		items[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/list"}`
	}
	batch := "[" + strings.Join(items, ",") + "]\n"
	var sent atomic.Int32 // each write is read whole by the session's one read of the pipe
	go func() {
		for range batches {
			if _, err := io.WriteString(inW, batch); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	// Let the session read what it will while nothing is read.
	for prev := int32(-1); prev != sent.Load(); {
		prev = sent.Load()
		time.Sleep(300 * time.Millisecond)
	}
	if n, most := int(sent.Load()), limit/perBatch+2; n > most {
		t.Fatalf("the session read %d batches of %d tools/list without its answers being read; want at most %d (the bound %d counts messages)",
			n, perBatch, most, limit)
	}
}

// TestNothingEntersAfterWait: once the session's end waits for its calls
// (serve returned while the reader may still read, from an input that
// cannot be interrupted), a message the reader still hands over runs
// nothing: no call starts, nothing counts as running, and the WaitGroup
// gains no work while its Wait may be returning.
func TestNothingEntersAfterWait(t *testing.T) {
	srv := testServer(&testChain{})
	s := srv.NewSession(&chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "local", Subject: "ws"}, SessionOptions{})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := newStream(s, ctx, cancel, jsonrpc.NewStream(strings.NewReader(""), io.Discard, 1<<20))
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		msg := mustParse(t, line)
		st.handle(&msg)
	}
	st.wait()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{"tag":"late"}}}`,
		`[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{"tag":"late-batch"}}}]`,
	} {
		msg := mustParse(t, line)
		handled := make(chan [2]bool, 1)
		go func() { ok, over := st.handle(&msg); handled <- [2]bool{ok, over} }()
		select {
		case r := <-handled:
			if !r[0] || r[1] {
				t.Fatalf("handle(%s) = %v, %v after wait; want the message dropped", line, r[0], r[1])
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("handle(%s) ran the call after wait instead of dropping it", line)
		}
	}
	select {
	case tag := <-started:
		t.Fatalf("call %q started after the session's end began waiting", tag)
	case <-time.After(100 * time.Millisecond):
	}
	if n := st.running.Load(); n != 0 {
		t.Errorf("%d calls counted as running after wait, want 0", n)
	}
}

// An extension request that takes long (clawd/api testing or refreshing
// an upstream server waits for its connect and read timeouts) does not
// hold up reading, and notifications/cancelled stops it unanswered, in
// both eras, as it does a tools/call: a request on the reader goroutine
// that could not be cancelled left the connection deaf for minutes.
func TestExtensionOffTheReaderAndCancellable(t *testing.T) {
	srv := testServer(&testChain{})
	ended := make(chan string, 4)
	srv.Extensions["clawd/block"] = func(ctx context.Context, s *Session, params jsontext.Value) (any, *jsonrpc.Error) {
		var p struct {
			Tag string `json:"tag"`
		}
		json.Unmarshal(params, &p)
		started <- p.Tag
		<-ctx.Done()
		ended <- p.Tag
		return map[string]bool{"late": true}, nil
	}
	h, st := streamHarness(t, srv)
	h.initialize("2025-06-18")
	for i, req := range []string{
		`{"jsonrpc":"2.0","id":"x1","method":"clawd/block","params":{"tag":"x1"}}`,
		modernReq(`"x2"`, "clawd/block", `"tag":"x2"`, ""),
	} {
		tag := []string{"x1", "x2"}[i]
		h.send(req)
		waitStarted(t, tag)
		// Written from a goroutine: the pipe takes nothing while nobody
		// reads it.
		go io.WriteString(h.in, `{"jsonrpc":"2.0","id":"p","method":"ping"}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"`+tag+`"}}`+"\n")
		if r := decode(t, h.recv()); string(r.ID) != `"p"` {
			t.Fatalf("%s: ping answered %s", tag, r.ID)
		}
		select {
		case got := <-ended:
			if got != tag {
				t.Fatalf("ended %s, want %s", got, tag)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the cancel did not reach the extension", tag)
		}
		// Once it is no longer running its answer (if any) is written;
		// the next line must be the next ping's.
		waitFor(t, func() bool { return st.running.Load() == 0 && !st.inlineRunning() })
		h.send(`{"jsonrpc":"2.0","id":"q","method":"ping"}`)
		if r := decode(t, h.recv()); string(r.ID) != `"q"` {
			t.Fatalf("%s: a cancelled extension request was answered: %s", tag, r.ID)
		}
	}
}

// A batch of notifications (cancels) holds no answer and runs nothing
// long, so it waits for no room: a batch of as many cancels as the bound
// (or any batch once the calls in progress fill the bound) made the
// reader wait for every running call to end, the very calls it was
// cancelling, and read nothing meanwhile, not even a single cancel.
func TestBatchOfCancelsWaitsForNoRoom(t *testing.T) {
	tc := &testChain{}
	h, st := streamHarness(t, testServer(tc))
	h.initialize("2025-03-26") // batches allowed
	h.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"block","arguments":{"tag":"c1"}}}`)
	waitStarted(t, "c1")
	waitFor(t, func() bool { return st.running.Load() == 1 }) // handed over: it runs beside the reader
	var b strings.Builder
	b.WriteString("[")
	for i := range int(st.s.srv.maxStreamCalls()) {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x%d"}},`, i)
	}
	b.WriteString(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}]` + "\n")
	go io.WriteString(h.in, b.String()+`{"jsonrpc":"2.0","id":"p","method":"ping"}`+"\n")
	if r := decode(t, h.recv()); string(r.ID) != `"p"` {
		t.Fatalf("answered %s, want the ping", r.ID)
	}
	waitFor(t, func() bool { return tc.lastOutcome().Result == "cancelled" })
}

// An extension request registered already cancelled (its session's calls
// were all cancelled: the session is ending) is not run, as such a
// tools/call is not: an extension may act (clawd/api adds, removes or
// allows an upstream server), and a request nobody will be answered about
// must not change anything.
func TestCancelledExtensionDoesNotRun(t *testing.T) {
	srv := testServer(&testChain{})
	var runs atomic.Int32
	srv.Extensions["clawd/act"] = func(ctx context.Context, s *Session, params jsontext.Value) (any, *jsonrpc.Error) {
		runs.Add(1)
		return map[string]bool{"acted": true}, nil
	}
	h, st := streamHarness(t, srv)
	h.initialize("2025-06-18")
	st.s.calls.cancelAll()
	h.send(`{"jsonrpc":"2.0","id":"a","method":"clawd/act"}`)
	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if r := decode(t, h.recv()); string(r.ID) != `"p"` {
		t.Fatalf("a cancelled extension request was answered: %s", r.ID)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("an extension request registered cancelled ran %d times, want 0", n)
	}
}

// An extension request in a batch is cancellable as one sent alone is:
// the batch runs beside the reader, and notifications/cancelled for the
// member stops it (clawd/api in a batch could otherwise be stopped only
// by the connection's end).
func TestExtensionInBatchCancellable(t *testing.T) {
	srv := testServer(&testChain{})
	ended := make(chan struct{})
	srv.Extensions["clawd/block"] = func(ctx context.Context, s *Session, params jsontext.Value) (any, *jsonrpc.Error) {
		started <- "b1"
		<-ctx.Done()
		close(ended)
		return map[string]bool{"late": true}, nil
	}
	h, _ := streamHarness(t, srv)
	h.initialize("2025-03-26") // batches end with 2025-06-18
	h.send(`[{"jsonrpc":"2.0","id":"b1","method":"clawd/block"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]`)
	waitStarted(t, "b1")
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b1"}}`)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancel did not reach the extension request in the batch")
	}
	if r := h.recv(); strings.Contains(r, `"b1"`) || !strings.Contains(r, `"b2"`) {
		t.Errorf("batch answered %s, want the ping's answer alone (a cancelled request is not answered)", r)
	}
}
