package mcp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/tools"
)

// stubborn is a tool that notices the cancellation but returns a result
// anyway, as a tool does that finishes its work in the instant the cancel
// is read (or ignores its context).
func stubborn() tools.Tool {
	return newFuncTool("stubborn", tools.PermRead, func(ctx context.Context, args jsontext.Value) (any, error) {
		var a struct {
			Tag string `json:"tag"`
		}
		tools.DecodeArgs(args, &a)
		started <- a.Tag
		<-ctx.Done()
		return map[string]any{"done": true}, nil
	})
}

// Over a stream, a call whose cancel was processed gets no response at all,
// even when its tool returns a result, and its audit outcome is cancelled.
func TestCancelledCallNeverAnsweredWithResult(t *testing.T) {
	tc := &testChain{}
	h := newHarness(t, testServer(tc, stubborn()))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"stubborn","arguments":{"tag":"s1"}}}`)
	waitStarted(t, "s1")
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}}`)
	waitFor(t, func() bool { return tc.lastOutcome().Result != "" })
	if o := tc.lastOutcome(); o.Result != chain.OutcomeCancelled {
		t.Errorf("outcome %+v, want %q", o, chain.OutcomeCancelled)
	}
	time.Sleep(20 * time.Millisecond) // room for a wrongly written answer to arrive first
	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if r := decode(t, h.recv()); string(r.ID) != `"p"` {
		t.Fatalf("the cancelled call was answered: id %s, result %s", r.ID, r.Result)
	}
}

// Over HTTP (ReplyToCancelled) the same call is answered "cancelled" with
// isError, never with the tool's result.
func TestCancelledCallHTTPAnswersCancelled(t *testing.T) {
	tc := &testChain{}
	srv := testServer(tc, stubborn())
	s := srv.NewSession(&chain.Caller{AuthMethod: "bearer", Subject: "ws"}, SessionOptions{HoldPendingCancels: true, ReplyToCancelled: true})
	defer s.Close()
	ctx := context.Background()
	handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"x","version":"1"}}}`))
	handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	go func() {
		waitStarted(t, "h1")
		handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h1"}}`))
	}()
	out := string(handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":"h1","method":"tools/call","params":{"name":"stubborn","arguments":{"tag":"h1"}}}`)))
	if !strings.Contains(out, `"isError":true`) || !strings.Contains(out, "cancelled") || strings.Contains(out, "done") {
		t.Errorf("cancelled HTTP call answered %s", out)
	}
	if o := tc.lastOutcome(); o.Result != chain.OutcomeCancelled {
		t.Errorf("outcome %+v, want %q", o, chain.OutcomeCancelled)
	}
	// The HTTP request's own context ending (the client closed the
	// stream) counts as a cancel too.
	rctx, cancel := context.WithCancel(ctx)
	go func() {
		waitStarted(t, "h2")
		cancel()
	}()
	out = string(handleBody(s, rctx, []byte(`{"jsonrpc":"2.0","id":"h2","method":"tools/call","params":{"name":"stubborn","arguments":{"tag":"h2"}}}`)))
	if strings.Contains(out, "done") || tc.lastOutcome().Result != chain.OutcomeCancelled {
		t.Errorf("call of a closed HTTP stream answered %s, outcome %+v", out, tc.lastOutcome())
	}
}

// A cancel read after the answer was committed changes nothing: the call
// is answered normally and the cancel reports that it found no call.
func TestCancelAfterCommitIsIgnored(t *testing.T) {
	r := newInflight(false)
	ctx, done, _ := r.register(context.Background(), "k")
	defer done()
	if !r.commit("k", ctx) {
		t.Fatal("commit of a live call failed")
	}
	if r.cancel("k") {
		t.Error("a cancel after the commit cancelled the call")
	}
	if ctx.Err() != nil {
		t.Error("the committed call's context was cancelled")
	}
	ctx2, done2, _ := r.register(context.Background(), "k2")
	defer done2()
	r.cancel("k2")
	if r.commit("k2", ctx2) {
		t.Error("commit after a cancel succeeded")
	}
}

// TestCallAfterCloseDoesNotRun: an HTTP request that found its session
// before a DELETE (or an eviction, or shutdown) ended it, and reached its
// call only after, ran the tool to its end: Close cancelled the calls
// running then, and a call registered later was not cancelled at all, so
// a session answered 204 to DELETE went on running a tool. A call
// registered on a closed session is now cancelled before it starts.
func TestCallAfterCloseDoesNotRun(t *testing.T) {
	var runs atomic.Int32
	tool := newFuncTool("count", tools.PermRead, func(context.Context, jsontext.Value) (any, error) {
		runs.Add(1)
		return map[string]any{"ran": true}, nil
	})
	tc := &testChain{}
	srv := testServer(tc, tool)
	s := srv.NewSession(&chain.Caller{AuthMethod: "bearer", Kind: "local", Subject: "ws"}, SessionOptions{HoldPendingCancels: true, ReplyToCancelled: true})
	ctx := context.Background()
	handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"x","version":"1"}}}`))
	handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	s.Close()
	out := string(handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{}}}`)))
	if runs.Load() != 0 || !strings.Contains(out, "cancelled") || strings.Contains(out, "ran") {
		t.Errorf("a call on a closed session ran %d times and answered %s; want it cancelled before it starts", runs.Load(), out)
	}
}
