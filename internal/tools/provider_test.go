package tools

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

type namedTool struct{ spec Spec }

func (t *namedTool) Spec() *Spec { return &t.spec }
func (t *namedTool) Call(context.Context, jsontext.Value) (any, error) {
	return nil, nil
}

func named(names ...string) []Tool {
	out := make([]Tool, len(names))
	for i, n := range names {
		out[i] = &namedTool{spec: Spec{Name: n}}
	}
	return out
}

// TestRegistryCountMatchesAll: Count is All without the list, so it must
// see the same tools (first name wins across providers) and filter them.
func TestRegistryCountMatchesAll(t *testing.T) {
	r := NewRegistry(
		&StaticProvider{Name: "a", List: named("bash", "read_file", "search")},
		&StaticProvider{Name: "b", List: named("search", "fetch")},
	)
	all := func(Entry) bool { return true }
	if got, want := r.Count(all), len(r.All()); got != want {
		t.Fatalf("Count(all) = %d, len(All()) = %d", got, want)
	}
	if got := r.Count(func(e Entry) bool { n := e.Tool.Spec().Name; return n != "bash" && n != "search" }); got != 2 {
		t.Errorf("Count without bash and search = %d, want 2 (read_file, fetch)", got)
	}
	r.Add(&StaticProvider{Name: "c", List: named("fetch", "git")})
	if got := r.Count(all); got != 5 {
		t.Errorf("Count after Add = %d, want 5", got)
	}
	if n := testing.AllocsPerRun(100, func() { r.Count(all) }); n != 0 {
		t.Errorf("Count allocates %.0f times per call, want 0", n)
	}
}

// countingProvider counts how often the registry reads its tools.
type countingProvider struct {
	StaticProvider
	reads atomic.Int64
}

func (c *countingProvider) Tools() []Tool { c.reads.Add(1); return c.StaticProvider.Tools() }

// TestRegistryIndex: Lookup and Count answer from the index without asking
// any provider for its tools; the first provider wins a clash, and removing
// it lets the next one's tool through.
func TestRegistryIndex(t *testing.T) {
	a := &countingProvider{StaticProvider: StaticProvider{Name: "a", List: named("bash", "search")}}
	b := &countingProvider{StaticProvider: StaticProvider{Name: "b", List: named("search", "fetch")}}
	r := NewRegistry(a, b)
	ra, rb := a.reads.Load(), b.reads.Load()
	for range 100 {
		r.Lookup("fetch")
		r.Lookup("nope")
		r.Count(func(Entry) bool { return true })
	}
	if a.reads.Load() != ra || b.reads.Load() != rb {
		t.Errorf("Lookup/Count read the providers' tools %d+%d times; the index should answer",
			a.reads.Load()-ra, b.reads.Load()-rb)
	}
	if e, ok := r.Lookup("search"); !ok || e.Provider != Provider(a) {
		t.Errorf("search served by %v, want the first provider a", e.Provider)
	}
	if got := r.Names(); !slices.Equal(got, []string{"bash", "search", "fetch"}) {
		t.Errorf("Names = %v, want bash search fetch (provider order, first wins)", got)
	}
	if r.Remove("nope") {
		t.Error("Remove of an unknown id reported a removal")
	}
	if !r.Remove("a") {
		t.Fatal("Remove(a) found nothing")
	}
	if e, ok := r.Lookup("search"); !ok || e.Provider != Provider(b) {
		t.Errorf("after removing a, search served by %v, want b", e.Provider)
	}
	if _, ok := r.Lookup("bash"); ok {
		t.Error("a removed provider's tool is still found")
	}
}

// TestRegistryFollowsProviderChanges: a provider's change signal rebuilds
// the index and reaches subscribers; after Remove, its signals no longer
// do.
func TestRegistryFollowsProviderChanges(t *testing.T) {
	p := &StaticProvider{Name: "up", Source: RemoteOrigin("https://example.invalid/mcp"), List: named("x")}
	r := NewRegistry(&StaticProvider{Name: "first", List: named("bash")})
	var events atomic.Int64
	stop := r.Subscribe(func() { events.Add(1) })
	r.Add(p)
	if events.Load() != 1 {
		t.Errorf("Add emitted %d events, want 1", events.Load())
	}
	p.SetTools(named("x", "y"))
	if _, ok := r.Lookup("y"); !ok {
		t.Fatal("a tool the provider added after its signal is not found")
	}
	if events.Load() != 2 {
		t.Errorf("provider change emitted %d events in all, want 2", events.Load())
	}
	p.SetTools(named("y"))
	if _, ok := r.Lookup("x"); ok {
		t.Error("a tool the provider dropped is still found")
	}
	r.Remove("up")
	n := events.Load()
	p.SetTools(named("z"))
	if _, ok := r.Lookup("z"); ok || events.Load() != n {
		t.Errorf("a removed provider's signal still reached the registry (found z: %v, events %d -> %d)", ok, n, events.Load())
	}
	stop()
	r.Add(&StaticProvider{Name: "late", List: named("w")})
	if events.Load() != n {
		t.Error("an unsubscribed callback was called")
	}
}

// TestRegistryConcurrentChanges: lookups while providers change and come
// and go (run with -race).
func TestRegistryConcurrentChanges(t *testing.T) {
	p := &StaticProvider{Name: "p", List: named("a")}
	r := NewRegistry(p)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			p.SetTools(named("a", "b"))
			p.SetTools(named("a"))
			q := &StaticProvider{Name: "q", List: named("c")}
			r.Add(q)
			r.Remove("q")
		}
		close(done)
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, ok := r.Lookup("a"); !ok {
				t.Error("a, never removed, was not found")
				return
			}
			r.All()
		}
	}()
	wg.Wait()
}

// TestOrigins: the constructors set the kind the chain decides by, and the
// zero Origin is unknown (never built-in).
func TestOrigins(t *testing.T) {
	for _, tc := range []struct {
		o    Origin
		kind OriginKind
		str  string
	}{
		{Origin{}, OriginUnknown, "unknown(0)"},
		{BuiltinOrigin(), OriginBuiltin, "builtin"},
		{LocalOrigin("/usr/bin/fs-server"), OriginLocal, "local:/usr/bin/fs-server"},
		{RemoteOrigin("https://mcp.example/x"), OriginRemote, "remote:https://mcp.example/x"},
	} {
		if tc.o.Kind != tc.kind || tc.o.String() != tc.str {
			t.Errorf("%+v: kind %v %q, want %v %q", tc.o, tc.o.Kind, tc.o.String(), tc.kind, tc.str)
		}
	}
}
