package tools

import (
	"context"
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
	all := func(string) bool { return true }
	if got, want := r.Count(all), len(r.All()); got != want {
		t.Fatalf("Count(all) = %d, len(All()) = %d", got, want)
	}
	if got := r.Count(func(n string) bool { return n != "bash" && n != "search" }); got != 2 {
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
