package tools

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Registry is the live set of providers and the index of their tools by
// name. The index is rebuilt when a provider is added or removed, or
// signals that its tools changed, so Lookup and Count never scan the
// providers. On a name clash the provider registered first wins (the
// built-in tools are registered first, so an upstream server cannot shadow
// them). Subscribe hears of every change, for tools/list_changed.
type Registry struct {
	mu      sync.RWMutex
	members []member
	index   map[string]Entry
	order   []Entry // every indexed tool, in provider order

	changes ChangeSignal
}

type member struct {
	p    Provider
	stop func() // unregisters the registry's OnChange callback
}

// NewRegistry returns a registry serving the given providers in order.
func NewRegistry(p ...Provider) *Registry {
	r := &Registry{}
	for _, x := range p {
		r.add(x)
	}
	r.mu.Lock()
	r.rebuild()
	r.mu.Unlock()
	return r
}

// Add appends a provider while the server runs: how an upstream MCP server
// joins. Its tools come after every earlier provider's on a name clash.
// Add does not Start the provider (the caller owns its lifecycle), and it
// does not check that the id is new: a second provider with an id already
// registered shares its allowlist entries, so callers must not do that.
func (r *Registry) Add(p Provider) {
	r.add(p)
	r.mu.Lock()
	r.rebuild()
	r.mu.Unlock()
	r.changes.Notify()
}

func (r *Registry) add(p Provider) {
	// Registered before the provider is in the list: a signal in between
	// only rebuilds the index once more.
	stop := p.OnChange(r.providerChanged)
	r.mu.Lock()
	r.members = append(r.members, member{p: p, stop: stop})
	r.mu.Unlock()
}

// Remove takes out every provider with this id (ids are unique in a
// well-formed registry) and reports whether there was one. It does not stop
// the provider; the caller owns its lifecycle.
func (r *Registry) Remove(id string) bool {
	r.mu.Lock()
	var stops []func()
	kept := r.members[:0]
	for _, m := range r.members {
		if m.p.ID() == id {
			stops = append(stops, m.stop)
			continue
		}
		kept = append(kept, m)
	}
	clear(r.members[len(kept):])
	r.members = kept
	if len(stops) > 0 {
		r.rebuild()
	}
	r.mu.Unlock()
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
	if len(stops) > 0 {
		r.changes.Notify()
	}
	return len(stops) > 0
}

// providerChanged is every provider's OnChange callback.
func (r *Registry) providerChanged() {
	r.mu.Lock()
	r.rebuild()
	r.mu.Unlock()
	r.changes.Notify()
}

// rebuild re-reads every provider's tools; r.mu is held for writing.
func (r *Registry) rebuild() {
	index := make(map[string]Entry, len(r.index))
	order := make([]Entry, 0, len(r.order))
	for _, m := range r.members {
		for _, t := range m.p.Tools() {
			if t == nil {
				continue
			}
			n := t.Spec().Name
			if _, dup := index[n]; dup {
				continue
			}
			e := Entry{Provider: m.p, Tool: t}
			index[n] = e
			order = append(order, e)
		}
	}
	r.index, r.order = index, order
}

// Subscribe registers fn to be called after every change of the tool set
// (a provider added, removed or signalling a change). fn runs in the
// goroutine that made the change, after the registry's lock is released,
// and must not block; stop unregisters it.
func (r *Registry) Subscribe(fn func()) (stop func()) { return r.changes.Subscribe(fn) }

// All returns every tool in provider order, first name wins. The slice is
// the caller's.
func (r *Registry) All() []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]Entry(nil), r.order...)
}

// Names returns the name of every tool, in provider order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, len(r.order))
	for i, e := range r.order {
		out[i] = e.Tool.Spec().Name
	}
	return out
}

// Count returns how many tools All would return that keep accepts, without
// building the list or allocating: GET /health asks on every request.
func (r *Registry) Count(keep func(Entry) bool) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := 0
	for _, e := range r.order {
		if keep(e) {
			n++
		}
	}
	return n
}

// Lookup finds a tool by exact name.
func (r *Registry) Lookup(name string) (Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.index[name]
	return e, ok
}

// Providers returns the providers in registration order.
func (r *Registry) Providers() []Provider {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Provider, len(r.members))
	for i, m := range r.members {
		out[i] = m.p
	}
	return out
}

// Start starts every provider in order. A provider that fails to start
// stays registered (its Health says why) and the error names it; the
// others are still started.
func (r *Registry) Start(ctx context.Context) error {
	var errs []error
	for _, p := range r.Providers() {
		if err := p.Start(ctx); err != nil {
			errs = append(errs, fmt.Errorf("provider %s (%s): %w", p.ID(), p.Origin(), err))
		}
	}
	return errors.Join(errs...)
}

// Stop stops every provider, in reverse order.
func (r *Registry) Stop(ctx context.Context) error {
	ps := r.Providers()
	var errs []error
	for i := len(ps) - 1; i >= 0; i-- {
		if err := ps[i].Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("provider %s: %w", ps[i].ID(), err))
		}
	}
	return errors.Join(errs...)
}
