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

// TestWatchConfigKeepsAnEmptiedFileOut: a config file that switched bash
// off and is then found empty (a save or a disk that failed part-way, an
// editor's truncate before its write) is not applied by the poll: applying
// it would switch bash back on. The log says so and how to apply it; a
// file with content again is applied as before, and SIGHUP's path (Reload)
// applies an empty file when asked.
func TestWatchConfigKeepsAnEmptiedFileOut(t *testing.T) {
	d, log, file := newReloadDaemon(t)
	if err := os.WriteFile(file, []byte("[tools]\nbash = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Reload("test"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.WatchConfig(ctx)
	if err := os.Truncate(file, 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * pollEvery)
	for !strings.Contains(log.String(), "the config file is empty now") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning about the emptied file:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * pollEvery) // more polls: still not applied
	if !d.chainOptions().DisabledTools["bash"] {
		t.Fatal("an emptied config file switched bash back on")
	}
	if err := os.WriteFile(file, []byte("[tools]\nbash = false\nwrite_file = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for !d.chainOptions().DisabledTools["write_file"] {
		if time.Now().After(deadline.Add(20 * pollEvery)) {
			t.Fatal("a config file with content again was never applied")
		}
		time.Sleep(20 * time.Millisecond)
	}
	os.Truncate(file, 0)
	if err := d.Reload("SIGHUP"); err != nil {
		t.Fatal(err)
	}
	if d.chainOptions().DisabledTools["bash"] {
		t.Error("an explicit reload of an empty file kept bash off")
	}
}
