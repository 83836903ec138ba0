//go:build linux || darwin

package transport_e2e

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/clawde/clawd/test/clawdtest"
)

// env is clawdtest's isolated user with a workspace holding a.txt.
type env struct{ *clawdtest.Env }

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{clawdtest.NewEnv(t, clawdBin)}
	if err := os.WriteFile(filepath.Join(e.WS, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// serve starts `clawd serve --log-level debug ARGS...` and waits until it
// says it serves.
func (e *env) serve(args ...string) *clawdtest.Daemon {
	e.T.Helper()
	return e.Serve(append([]string{"--log-level", "debug"}, args...)...)
}

// initMsg is the initialize request these tests send on the wire.
const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie has exited; only its parent has not reaped it yet.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
		return false
	}
	return true
}
