package tools

import (
	"slices"
	"sync"
)

// Provider is a source of tools: clawd's built-in tools today, upstream MCP
// servers later. The registry re-reads Tools on every lookup, so a provider
// may change its tool set while the server runs.
type Provider interface {
	// ID names the provider; it is the server id of the supply-chain allowlist.
	ID() string
	// Tools returns the provider's current tools.
	Tools() []Tool
	// BinaryPath is the executable that implements the tools, whose SHA-256
	// must be allowlisted; "" for tools built into clawd itself.
	BinaryPath() string
}

// Entry is one tool together with the provider that serves it.
type Entry struct {
	Provider Provider
	Tool     Tool
}

// Registry is the live set of providers; each provider's tools are re-read
// on every lookup.
type Registry struct {
	mu        sync.RWMutex
	providers []Provider
}

// NewRegistry returns a registry serving the given providers in order; on a
// name clash the earlier provider's tool wins.
func NewRegistry(p ...Provider) *Registry { return &Registry{providers: p} }

// Add appends a provider while the server runs: how an upstream MCP server
// joins (test/chain plugs a fake external provider in this way).
func (r *Registry) Add(p Provider) {
	r.mu.Lock()
	r.providers = append(r.providers, p)
	r.mu.Unlock()
}

// All returns every tool in provider order, first name wins.
func (r *Registry) All() []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Entry
	seen := map[string]bool{}
	for _, p := range r.providers {
		for _, t := range p.Tools() {
			n := t.Spec().Name
			if seen[n] {
				continue
			}
			seen[n] = true
			out = append(out, Entry{Provider: p, Tool: t})
		}
	}
	return out
}

// Count returns how many tools All would return whose name keep accepts,
// without building the list: GET /health asks on every request.
func (r *Registry) Count(keep func(name string) bool) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var buf [32]string
	seen := buf[:0]
	n := 0
	for _, p := range r.providers {
		for _, t := range p.Tools() {
			name := t.Spec().Name
			if slices.Contains(seen, name) {
				continue
			}
			seen = append(seen, name)
			if keep(name) {
				n++
			}
		}
	}
	return n
}

// Lookup finds a tool by exact name.
func (r *Registry) Lookup(name string) (Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, p := range r.providers {
		for _, t := range p.Tools() {
			if t.Spec().Name == name {
				return Entry{Provider: p, Tool: t}, true
			}
		}
	}
	return Entry{}, false
}

// StaticProvider serves a fixed tool list.
type StaticProvider struct {
	Name   string
	Binary string
	List   []Tool
}

func (s *StaticProvider) ID() string         { return s.Name }
func (s *StaticProvider) Tools() []Tool      { return s.List }
func (s *StaticProvider) BinaryPath() string { return s.Binary }
