package tools

import (
	"context"
	"sync"
)

// Provider is a source of tools: clawd's built-in tools (internal/builtin),
// and upstream MCP servers. The Registry indexes every provider's tools and
// re-reads them when the provider signals a change (OnChange).
type Provider interface {
	// ID names the provider; it is the server id of the supply-chain
	// allowlist, so it must be unique within a registry.
	ID() string
	// Origin says where the tools run; the chain's supply-chain step
	// decides by it (built-in passes, a local executable is hashed and
	// checked against the allowlist, anything else is refused).
	Origin() Origin
	// Tools returns the provider's current tools. It must not call back
	// into the registry (the registry may hold its lock while it asks).
	Tools() []Tool

	// Start makes the provider ready to serve (spawns or connects to its
	// server); Stop releases it. Both honour ctx and may be called once
	// each, Start first.
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	// Health is the provider's current state, for diagnostics.
	Health() ProviderHealth
	// OnChange registers notify, to be called after the provider's tool
	// list changed (an upstream server's notifications/tools/list_changed
	// or a reconnect); stop unregisters it. The provider calls notify
	// without holding a lock that Tools takes, and notify does not block.
	OnChange(notify func()) (stop func())
}

// ProviderStatus is the coarse state of a provider.
type ProviderStatus string

const (
	StatusStarting ProviderStatus = "starting"
	StatusReady    ProviderStatus = "ready"
	// StatusDegraded: serving, but the last operation failed (LastError).
	StatusDegraded ProviderStatus = "degraded"
	StatusStopped  ProviderStatus = "stopped"
	// StatusFailed: not serving; LastError says why.
	StatusFailed ProviderStatus = "failed"
)

// ProviderHealth is what Provider.Health reports.
type ProviderHealth struct {
	Status ProviderStatus
	// LastError is the most recent failure, nil if none. It may outlive a
	// recovery (Status ready with a LastError says what happened last).
	LastError error
}

// Entry is one tool together with the provider that serves it.
type Entry struct {
	Provider Provider
	Tool     Tool
}

// StaticProvider serves a tool list set in code: tests use it to plug a
// fake provider into a real server, with whatever Origin the test needs.
// Its lifecycle is trivial (nothing to start; Health is ready until Stop),
// and SetTools signals a change like an upstream server's list_changed.
type StaticProvider struct {
	Name   string
	Source Origin
	List   []Tool

	mu       sync.RWMutex
	stopped  bool
	watchers ChangeSignal
}

func (s *StaticProvider) ID() string     { return s.Name }
func (s *StaticProvider) Origin() Origin { return s.Source }

func (s *StaticProvider) Tools() []Tool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.List
}

// SetTools replaces the tool list and signals the change.
func (s *StaticProvider) SetTools(list []Tool) {
	s.mu.Lock()
	s.List = list
	s.mu.Unlock()
	s.watchers.Notify()
}

func (s *StaticProvider) Start(context.Context) error {
	s.mu.Lock()
	s.stopped = false
	s.mu.Unlock()
	return nil
}

func (s *StaticProvider) Stop(context.Context) error {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	return nil
}

func (s *StaticProvider) Health() ProviderHealth {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stopped {
		return ProviderHealth{Status: StatusStopped}
	}
	return ProviderHealth{Status: StatusReady}
}

func (s *StaticProvider) OnChange(notify func()) (stop func()) { return s.watchers.Subscribe(notify) }

// ChangeSignal is a set of change callbacks: a provider embeds one to
// implement OnChange, the Registry one for its subscribers. The zero value
// is ready to use.
type ChangeSignal struct {
	mu   sync.Mutex
	next uint64
	fns  map[uint64]func()
}

// Subscribe registers fn; stop unregisters it.
func (c *ChangeSignal) Subscribe(fn func()) (stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fns == nil {
		c.fns = map[uint64]func(){}
	}
	id := c.next
	c.next++
	c.fns[id] = fn
	return func() {
		c.mu.Lock()
		delete(c.fns, id)
		c.mu.Unlock()
	}
}

// Notify calls every callback in the calling goroutine, outside the lock so
// a callback may subscribe or unsubscribe.
func (c *ChangeSignal) Notify() {
	c.mu.Lock()
	fns := make([]func(), 0, len(c.fns))
	for _, fn := range c.fns {
		fns = append(fns, fn)
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
