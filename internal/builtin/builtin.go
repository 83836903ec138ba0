// Package builtin holds clawd's five workspace tools (bash, read_file,
// write_file, list_dir, search) and the provider that serves them. They
// implement the contract of internal/tools; who may call them is decided by
// internal/chain before they run.
package builtin

import (
	"context"
	"time"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// BuiltinProviderID is the provider id of the tools compiled into clawd.
// The supply-chain step passes them by their origin (tools.OriginBuiltin),
// not by this id.
const BuiltinProviderID = "clawd"

// Limits are the config values the built-in tools read on every call, so a
// config reload takes effect without a restart.
type Limits struct {
	MaxReadBytes    int64         // read_file content cap (max_read_bytes)
	DefaultTimeout  time.Duration // bash timeout when the call gives none (tool_timeout_ms)
	MaxOutputBytes  int           // bash stdout/stderr cap each (8 KiB)
	MaxListEntries  int           // list_dir entry cap
	MaxSearchFileMB int64         // search skips files larger than this many MiB
}

// Caps that no config key sets; they live here, next to the tools they
// bound, and are not defaults of anything in internal/config.
const (
	maxOutputBytes  = 8 << 10
	maxListEntries  = 10000
	maxSearchFileMB = 64
)

// LimitsFrom takes the limits from a configuration: internal/config is the
// one source of every configurable default, so the tools never restate one.
func LimitsFrom(c *config.Config) Limits {
	return Limits{
		MaxReadBytes:    c.MaxReadBytes,
		DefaultTimeout:  time.Duration(c.ToolTimeoutMS) * time.Millisecond,
		MaxOutputBytes:  maxOutputBytes,
		MaxListEntries:  maxListEntries,
		MaxSearchFileMB: maxSearchFileMB,
	}
}

// DefaultLimits are used when the server supplies none: the limits of
// config.Default().
func DefaultLimits() Limits { return LimitsFrom(config.Default()) }

// Env is what the built-in tools need from the server: the workspace and the
// live limits.
type Env struct {
	WS     *sandbox.Workspace
	Limits func() Limits
	// Groups, if set, records each bash call's process group from just
	// after the shell starts until the group has been killed, so that what
	// a call left running when clawd was killed (kill -9: nothing ran the
	// group kill) is ended at the next start. Started is given the shell's
	// pid, which is the group's id, and returns what drops the record.
	Groups GroupRecorder
}

// GroupRecorder is Env.Groups (upstream.GroupRecorder in the daemon).
type GroupRecorder interface {
	Started(pgid int) (forget func())
}

func (e *Env) limits() Limits {
	if e.Limits == nil {
		return DefaultLimits()
	}
	return e.Limits()
}

// Provider serves the five workspace tools. Its lifecycle is trivial, and
// that is the truth rather than a stub: the tools are compiled into clawd
// and run in its process, so there is nothing to spawn or connect to
// (Start, Stop), nothing that can fail apart from clawd itself (Health is
// always ready; a failing call is reported per call), and the tool list is
// fixed for the life of the process (OnChange never fires). Switching a
// tool off in [tools] is the chain's business, not a change of this list.
type Provider struct {
	list []tools.Tool
}

// Builtin returns the provider of the five workspace tools.
func Builtin(env *Env) *Provider {
	return &Provider{list: []tools.Tool{
		NewBash(env),
		NewReadFile(env),
		NewWriteFile(env),
		NewListDir(env),
		NewSearch(env),
	}}
}

// Names are the names of the built-in tools, for checking [tools] keys
// where no registry is running (clawd doctor, clawd explain).
func Names() []string {
	p := Builtin(&Env{})
	out := make([]string, len(p.list))
	for i, t := range p.list {
		out[i] = t.Spec().Name
	}
	return out
}

func (p *Provider) ID() string                  { return BuiltinProviderID }
func (p *Provider) Origin() tools.Origin        { return tools.BuiltinOrigin() }
func (p *Provider) Tools() []tools.Tool         { return p.list }
func (p *Provider) Start(context.Context) error { return nil }
func (p *Provider) Stop(context.Context) error  { return nil }
func (p *Provider) Health() tools.ProviderHealth {
	return tools.ProviderHealth{Status: tools.StatusReady}
}
func (p *Provider) OnChange(func()) (stop func()) { return func() {} }
