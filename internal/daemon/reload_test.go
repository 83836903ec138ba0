package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

func newReloadDaemon(t *testing.T) (*Daemon, *clawdtest.SyncBuffer, string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	ws := filepath.Join(home, "ws")
	os.Mkdir(ws, 0o755)
	var log clawdtest.SyncBuffer
	d, err := New(Options{Workspace: ws, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	os.MkdirAll(filepath.Dir(d.Paths.ConfigFile), 0o700)
	return d, &log, d.Paths.ConfigFile
}

func TestReload(t *testing.T) {
	d, log, file := newReloadDaemon(t)
	if d.Config().PolicyStubMode || len(d.Config().DisabledTools()) != 0 {
		t.Fatal("unexpected start config")
	}
	os.WriteFile(file, []byte("policy_stub_mode = true\nport = 9000\n[tools]\nbash = false\n"), 0o600)
	if err := d.Reload("test"); err != nil {
		t.Fatal(err)
	}
	opts := d.chainOptions()
	if !opts.PolicyStubMode || !opts.DisabledTools["bash"] {
		t.Errorf("after reload: %+v", opts)
	}
	if !strings.Contains(log.String(), "key=port") {
		t.Errorf("no restart warning for port:\n%s", log)
	}

	for _, bad := range []string{"transport = \"carrier-pigeon\"\n", "bind_addr = \"0.0.0.0\"\n", "nonsense = 1\n", "[tools]\nbsah = false\n"} {
		os.WriteFile(file, []byte(bad), 0o600)
		if err := d.Reload("test"); err == nil {
			t.Errorf("config %q was accepted", bad)
		}
		if opts := d.chainOptions(); !opts.PolicyStubMode || !opts.DisabledTools["bash"] {
			t.Errorf("a rejected config %q replaced the running one: %+v", bad, opts)
		}
	}
	if !strings.Contains(log.String(), "config reload failed") || !strings.Contains(log.String(), "bsah") {
		t.Errorf("the log does not say why:\n%s", log)
	}

	// The default file is optional: removing it means the defaults.
	os.Remove(file)
	if err := d.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if d.Config().PolicyStubMode {
		t.Error("defaults not restored after the file was removed")
	}
}

// TestWatchConfigSeesAWriteBeforeItStarts: a config written after the
// daemon read it but before the watcher took its first look is reloaded.
// The watcher used to take that first look itself, so such a write (a test,
// or a user saving right after `clawd serve` started) was never noticed.
func TestWatchConfigSeesAWriteBeforeItStarts(t *testing.T) {
	d, _, file := newReloadDaemon(t)
	if err := os.WriteFile(file, []byte("[tools]\nbash = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.WatchConfig(ctx)
	deadline := time.Now().Add(10 * pollEvery)
	for !d.chainOptions().DisabledTools["bash"] {
		if time.Now().After(deadline) {
			t.Fatal("the config written before the watcher started was never reloaded")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
