package daemon

import (
	"context"
	"maps"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/clawde/clawd/internal/config"
)

// pollEvery is how often WatchConfig looks at the config file and the trust
// registry's generation. A change of the file is applied once two polls in
// a row see the file the same, so a file caught half-way through a write
// is not.
const pollEvery = time.Second

// WatchConfig keeps the running server in step with its settings until ctx
// ends: it re-reads the config file on SIGHUP and when the file changes
// (polled every second: mtime, size, inode; applied once it has stayed so
// for a poll, and never when the file was emptied: see emptied), and it
// tells clients to re-list tools (notifications/tools/list_changed) when a
// reload or a trust registry edit (`clawd trust set`, `clawd mcp allow`)
// may change what they see. Calls always use the current settings; this only makes discovery
// follow promptly. It returns at once; the work runs on a goroutine.
func (d *Daemon) WatchConfig(ctx context.Context) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	last := d.loadedState()
	gen, _ := d.Store.Generation()
	go func() {
		defer signal.Stop(hup)
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		var seen fileState // a change the last poll saw, applied if this one sees it again
		changing := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				d.Reload("SIGHUP")
				last, changing = d.loadedState(), false
			case <-t.C:
				st := statConfig(d.ConfigFile)
				switch {
				case !st.differs(last):
					changing = false
				case !changing || st.differs(seen):
					// Not settled: an editor may be half-way through a
					// write, or a save truncated the file first.
					seen, changing = st, true
				case emptied(last, st):
					d.Logger.Warn("the config file is empty now; the running configuration stays in effect (a save cut short would otherwise switch tools back on): send SIGHUP or restart clawd to apply an empty file", "file", d.ConfigFile)
					last, changing = st, false
				default:
					d.Reload("the file changed")
					last, changing = st, false
				}
				if g, err := d.Store.Generation(); err == nil && g != gen {
					gen = g
					d.Logger.Info("trust registry or allowlist changed; asking clients to re-list tools")
					d.Server.NotifyToolsChanged()
					d.retryUpstreams(ctx) // an upstream may be allowlisted now
					d.recheckEgress(ctx)  // or an origin no longer allowed
				}
			}
		}
	}()
}

// emptied reports whether a config file that had content (was) is empty
// now: far more often a save or a disk that failed part-way than a choice,
// and applying it would switch back on every tool the file switched off.
// The poll leaves it to SIGHUP or a restart.
func emptied(was, now fileState) bool {
	return was.fi != nil && was.fi.Size() > 0 && now.fi != nil && now.fi.Size() == 0
}

// loadedState is the config file as it was when it was last read.
func (d *Daemon) loadedState() fileState {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	return d.loadedFile
}

// fileState is what the poll compares: the file's identity (os.SameFile:
// device and inode, so an editor's rename-over is seen), size and mtime.
type fileState struct{ fi os.FileInfo }

func statConfig(path string) fileState {
	fi, err := os.Stat(path)
	if err != nil {
		return fileState{}
	}
	return fileState{fi}
}

func (a fileState) differs(b fileState) bool {
	if a.fi == nil || b.fi == nil {
		return (a.fi == nil) != (b.fi == nil)
	}
	return !os.SameFile(a.fi, b.fi) || a.fi.Size() != b.fi.Size() || !a.fi.ModTime().Equal(b.fi.ModTime())
}

// Reload re-reads the config file. A file that fails to load or validate
// leaves the running configuration in place, and the error (naming the key)
// goes to the log on stderr. Settings the tools and the chain read per call
// (tools on/off, policy_stub_mode, limits, timeouts) apply to the next call;
// transport, address, socket, token path and concurrency need a restart,
// which the log says.
func (d *Daemon) Reload(why string) error {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	required := d.ConfigFile != d.Paths.ConfigFile // --config names a file that must exist
	d.loadedFile = statConfig(d.ConfigFile)
	cfg, err := config.Load(d.ConfigFile, required)
	if err != nil {
		d.Logger.Error("config reload failed; the running configuration stays in effect", "why", why, "err", err)
		return err
	}
	if err := d.checkTools(d.ConfigFile, cfg); err != nil {
		d.Logger.Error("config reload failed; the running configuration stays in effect", "why", why, "err", err)
		return err
	}
	old := d.setConfig(cfg)
	for _, f := range restartOnly(old, cfg) {
		d.Logger.Warn("config change takes effect when clawd restarts", "key", f)
	}
	changed := old.PolicyStubMode != cfg.PolicyStubMode || !maps.Equal(old.DisabledTools(), cfg.DisabledTools())
	d.Logger.Info("config reloaded", "why", why, "file", d.ConfigFile, "tools_changed", changed)
	if changed {
		d.Server.NotifyToolsChanged()
	}
	return nil
}

// restartOnly lists the keys that changed but are read only at startup.
func restartOnly(a, b *config.Config) []string {
	var out []string
	add := func(changed bool, key string) {
		if changed {
			out = append(out, key)
		}
	}
	add(a.Transport != b.Transport, "transport")
	add(a.SocketPath != b.SocketPath, "socket_path")
	add(a.Port != b.Port, "port")
	add(a.BindAddr != b.BindAddr, "bind_addr")
	add(a.TokenPath != b.TokenPath, "token_path")
	add(a.MaxConcurrency != b.MaxConcurrency, "max_concurrency")
	add(a.MaxMessageBytes != b.MaxMessageBytes, "max_message_bytes")
	add(a.AuditSync != b.AuditSync, "audit_sync")
	add(a.UpstreamToolNameMax != b.UpstreamToolNameMax, "upstream_tool_name_max")
	return out
}
