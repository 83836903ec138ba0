//go:build linux

package builtin

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/tools"
)

// TestDirSwappedForFIFONeverBlocks exchanges a directory with a named pipe
// (renameat2 RENAME_EXCHANGE) as fast as the kernel allows while every file
// tool is called on paths through that name. A directory that a tool saw as
// a directory (a listing, an lstat) and then opens by name may meanwhile be
// the pipe; an open of a pipe without O_DIRECTORY or O_NONBLOCK waits for a
// writer that never comes, past any timeout and cancel. Each call must end
// within a few seconds, whatever the interleaving.
func TestDirSwappedForFIFONeverBlocks(t *testing.T) {
	dir := t.TempDir()
	writeFileT(t, filepath.Join(dir, "d", "e", "f.txt"), "needle\n", 0o644)
	d, p := filepath.Join(dir, "d"), filepath.Join(dir, "p")
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, p, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE unsupported here: %v", err)
	}
	env := testEnv(t, dir, &Limits{MaxReadBytes: 1 << 20, DefaultTimeout: time.Second, MaxListEntries: 100, MaxSearchFileMB: 1})

	var stop atomic.Bool
	var swapper sync.WaitGroup
	swapper.Go(func() {
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, p, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
			runtime.Gosched()
		}
	})
	// A call stuck opening the pipe is released by a writer, so that a
	// failing test ends instead of hanging the package.
	release := func() {
		for _, name := range []string{d, p} {
			if fd, err := syscall.Open(name, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				syscall.Close(fd)
			}
		}
	}
	defer func() {
		stop.Store(true)
		swapper.Wait()
	}()

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"search", map[string]any{"query": "needle"}},
		{"search", map[string]any{"query": "needle", "path": "d"}},
		{"read_file", map[string]any{"path": "d/e/f.txt"}},
		{"list_dir", map[string]any{"path": "d", "recursive": true}},
		{"write_file", map[string]any{"path": "d/e/g.txt", "content": "x"}},
	}
	byName := map[string]tools.Tool{
		"search": NewSearch(env), "read_file": NewReadFile(env),
		"list_dir": NewListDir(env), "write_file": NewWriteFile(env),
	}
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		c := calls[i%len(calls)]
		tool := byName[c.tool]
		raw, _ := json.Marshal(c.args)
		done := make(chan struct{})
		var stage atomic.Value
		stage.Store("the chain's sandbox check (Workspace.Check)")
		go func() {
			defer close(done)
			// The chain's sandbox step resolves the path first.
			if pa, ok := c.args["path"].(string); ok {
				env.WS.Check(context.Background(), pa)
			}
			stage.Store("the tool")
			tool.Call(context.Background(), raw)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			stop.Store(true)
			where := stage.Load()
			for {
				release()
				select {
				case <-done:
				case <-time.After(10 * time.Millisecond):
					continue
				}
				break
			}
			t.Fatalf("%s %s blocked for 5 s in %s on a directory swapped for a named pipe", c.tool, raw, where)
		}
	}
}
