// Package builtin holds clawd's five workspace tools (bash, read_file,
// write_file, list_dir, search) and the provider that serves them. They
// implement the contract of internal/tools; who may call them is decided by
// internal/chain before they run.
package builtin

import (
	"time"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// BuiltinProviderID is the provider id of the tools compiled into clawd. The
// supply-chain step passes it: its binary is clawd itself.
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
}

func (e *Env) limits() Limits {
	if e.Limits == nil {
		return DefaultLimits()
	}
	return e.Limits()
}

// Builtin returns the provider of the five workspace tools.
func Builtin(env *Env) *tools.StaticProvider {
	return &tools.StaticProvider{
		Name: BuiltinProviderID,
		List: []tools.Tool{
			NewBash(env),
			NewReadFile(env),
			NewWriteFile(env),
			NewListDir(env),
			NewSearch(env),
		},
	}
}
