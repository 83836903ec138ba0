//go:build linux

package builtin

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Pseudo file systems (procfs, sysfs, tracefs, debugfs) hold regular files
// that report size 0 and whose read waits for data that may never come
// (/proc/kmsg, tracefs's trace_pipe); a workspace holds them when it is /
// or contains such a mount. A search must not read them: an empty file has
// nothing to match, and a read blocked in the kernel ignores the time limit
// and the cancel. tracefs stands in for them here (it needs root and the
// right to mount; the test is skipped without).
func TestSearchSkipsPseudoFiles(t *testing.T) {
	dir := t.TempDir()
	writeFileT(t, filepath.Join(dir, "a.txt"), "needle\n", 0o644)
	mnt := filepath.Join(dir, "t")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("nodev", mnt, "tracefs", 0, ""); err != nil {
		t.Skipf("cannot mount tracefs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	if fi, err := os.Stat(filepath.Join(mnt, "trace_pipe")); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		t.Skipf("tracefs has no empty regular trace_pipe here: %v %v", fi, err)
	}
	env := testEnv(t, dir, &Limits{MaxReadBytes: 1 << 20, DefaultTimeout: time.Second, MaxListEntries: 100, MaxSearchFileMB: 1})
	for _, args := range []map[string]any{
		{"query": "needle"},
		{"query": "needle", "path": "t"},
		{"query": "needle", "path": "t/trace_pipe"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := callToolCtx(context.Background(), t, NewSearch(env), args)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("search %v: %v", args, err)
			}
		case <-time.After(5 * time.Second):
			// The read stays blocked in the kernel; the goroutine is
			// left behind.
			t.Fatalf("search %v still running after 5 s with a 1 s time limit: blocked reading a pseudo file", args)
		}
	}
}
