package e2e

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A kill -9 of clawd runs no cleanup, and nothing would be left to enforce
// a running bash call's timeout: the shell, and a program it replaced
// itself with (exec), die with clawd (the parent-death signal) instead of
// running on unbounded. What the shell forked is beyond that signal
// (docs/security.md). Linux only: the parent-death signal is Linux's.
func TestBashDiesWithKilledClawd(t *testing.T) {
	e := newEnv(t)
	r := e.Stdio()
	r.Initialize("claude-code")
	r.SendLine(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 60 & echo $! > bg.pid; echo $$ > sh.pid; wait","timeout_ms":60000}}}`)
	r.SendLine(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > ex.pid; exec sleep 61","timeout_ms":60000}}}`)
	sh := waitPid(t, filepath.Join(e.WS, "sh.pid"))
	ex := waitPid(t, filepath.Join(e.WS, "ex.pid"))
	bg := waitPid(t, filepath.Join(e.WS, "bg.pid"))
	defer syscall.Kill(bg, syscall.SIGKILL) // forked by the shell: it outlives clawd
	defer syscall.Kill(sh, syscall.SIGKILL)
	defer syscall.Kill(ex, syscall.SIGKILL)
	r.Cmd.Process.Kill()
	if !r.Exited(5 * time.Second) {
		t.Fatal("clawd did not die of SIGKILL")
	}
	waitGone(t, sh)
	waitGone(t, ex)
}
