package chain_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/tools"
)

type noopTool struct{ spec tools.Spec }

func (t *noopTool) Spec() *tools.Spec                                 { return &t.spec }
func (t *noopTool) Call(context.Context, jsontext.Value) (any, error) { return nil, nil }

// benchChain is the daemon's chain on a real database in a temp dir.
func benchChain(b *testing.B, audited, syncFull bool) (*chain.Chain, *chain.Call, *store.Writer) {
	dir := b.TempDir()
	os.Mkdir(filepath.Join(dir, "ws"), 0o755)
	os.WriteFile(filepath.Join(dir, "ws", "a.txt"), []byte("hi"), 0o644)
	ws, err := sandbox.Open(filepath.Join(dir, "ws"))
	if err != nil {
		b.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, "clawd.db"), store.Options{SyncFull: syncFull})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close(); ws.Close() })
	c := &chain.Chain{WS: ws, Trust: db, Allow: db}
	var w *store.Writer
	if audited {
		if w, err = db.Audit(); err != nil {
			b.Fatal(err)
		}
		c.Audit = w
	}
	caller := &chain.Caller{Transport: "stdio", AuthMethod: "spawn", Kind: "local", Subject: "ws-12345678"}
	caller.Resolve("")
	tool := &noopTool{tools.Spec{Name: "read_file", Permission: tools.PermRead, PathArgs: []string{"path"}}}
	call := &chain.Call{Caller: caller, ToolName: "read_file", RequestID: "1",
		Entry: tools.Entry{Provider: &tools.StaticProvider{Name: "clawd", Source: tools.BuiltinOrigin()}, Tool: tool},
		Args:  jsontext.Value(`{"path":"a.txt"}`)}
	return c, call, w
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-us")
}

// BenchmarkChain measures steps 2-5 plus the audit record for one call at
// a time, as a sequential stdio client sees it: Authorize (the decision and
// its durable Allow row: a journal line; the folds into SQLite run beside,
// on the timer's goroutine) and Finish (the outcome, queued), with a no-op
// handler. "decide" is steps 2-5 alone, without an audit log, the peer for
// the audit's share; "audited-gap" leaves 50 us between calls (not timed),
// as a client's round trip does, so threads parked after one call have to
// be woken for the next, which back-to-back calls hide; "audited-goroutine"
// runs each call on a goroutine started for it; "audited-syncfull" fsyncs
// every journal line (what surviving a power loss would cost).
func BenchmarkChain(b *testing.B) {
	for _, bc := range []struct {
		name              string
		audited, syncFull bool
		gap, goroutine    bool
	}{
		{"decide", false, false, false, false},
		{"audited", true, false, false, false},
		{"audited-gap", true, false, true, false},
		{"audited-goroutine", true, false, false, true},
		{"audited-syncfull", true, true, false, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, call, _ := benchChain(b, bc.audited, bc.syncFull)
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			one := func() {
				d := c.Authorize(ctx, call)
				if !d.Allowed() {
					b.Error(d.Err)
				}
				c.Finish(call, d, chain.Outcome{Result: chain.OutcomeOK})
			}
			done := make(chan struct{})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if bc.gap {
					// Spin rather than sleep: a sleep's timer wake-up
					// would be measured too.
					for t := time.Now(); time.Since(t) < 50*time.Microsecond; {
					}
				}
				t0 := time.Now()
				if bc.goroutine {
					go func() { one(); done <- struct{}{} }()
					<-done
				} else {
					one()
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkChainParallel: many callers at once share folds; reports
// calls/s and fold transactions per call.
func BenchmarkChainParallel(b *testing.B) {
	c, call, w := benchChain(b, true, false)
	ctx := context.Background()
	var mu sync.Mutex
	var lat []time.Duration
	c0, r0 := w.Stats()
	b.SetParallelism(16)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var local []time.Duration
		for pb.Next() {
			t0 := time.Now()
			d := c.Authorize(ctx, call)
			if !d.Allowed() {
				b.Error(d.Err)
				return
			}
			c.Finish(call, d, chain.Outcome{Result: chain.OutcomeOK})
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	b.StopTimer()
	elapsed := time.Since(start)
	c1, r1 := w.Stats()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	if b.N > 0 {
		b.ReportMetric(float64(c1-c0)/float64(b.N), "commits/call")
	}
	_ = r1 - r0
	reportPercentiles(b, lat)
}

// noopNext is a chain.Next whose tool returns a fixed result and whose
// commit always succeeds.
type noopNext struct{}

func (noopNext) Call(context.Context) (any, error) { return nil, nil }
func (noopNext) Commit(context.Context) bool       { return true }

// BenchmarkRun is BenchmarkChain's "audited" case through Run, the entry
// point the MCP session uses: the difference is Execute's share (the panic
// guard, the commit, the outcome's label).
func BenchmarkRun(b *testing.B) {
	c, call, _ := benchChain(b, true, false)
	ctx := context.Background()
	var next chain.Next = noopNext{}
	b.ReportAllocs()
	for b.Loop() {
		if a := c.Run(ctx, call, next); a.Kind != chain.AnswerResult {
			b.Fatal(a.Err)
		}
	}
}

// BenchmarkExecute is Execute alone (what Run adds around a call besides
// Authorize and Finish): for a call that succeeds it allocates nothing and
// costs about 150 ns on a 2-core VM, mostly its two clock reads.
func BenchmarkExecute(b *testing.B) {
	ctx := context.Background()
	call := &chain.Call{ToolName: "read_file"}
	var next chain.Next = noopNext{}
	b.ReportAllocs()
	for b.Loop() {
		if a, o := chain.Execute(ctx, call, next, nil); a.Kind != chain.AnswerResult || o.Result != chain.OutcomeOK {
			b.Fatal(a, o)
		}
	}
}
