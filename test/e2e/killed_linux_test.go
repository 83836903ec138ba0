package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/support/proc"
)

// A kill -9 of clawd runs no cleanup, and nothing would be left to enforce
// a running bash call's timeout: the shell, and a program it replaced
// itself with (exec), die with clawd (the parent-death signal) instead of
// running on unbounded. What the shell forked (a background job, a nohup'd
// one, a pipeline's members, a job control moved to a group of its own) is
// beyond that signal and outlives clawd, but each call's process group and
// session are recorded while it runs, and the next start of clawd in the
// workspace ends their survivors. Linux only: the
// parent-death signal and the record sweep are Linux's.
func TestBashDiesWithKilledClawd(t *testing.T) {
	e := newEnv(t)
	r := e.Stdio()
	r.Initialize("claude-code")
	r.SendLine(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 60 & echo $! > bg.pid; nohup sleep 62 >/dev/null 2>&1 & echo $! > nohup.pid; sleep 63 | sleep 64 & set -m; sleep 65 & echo $! > job.pid; set +m; echo $$ > sh.pid; wait","timeout_ms":60000}}}`)
	r.SendLine(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > ex.pid; exec sleep 61","timeout_ms":60000}}}`)
	sh := waitPid(t, filepath.Join(e.WS, "sh.pid"))
	ex := waitPid(t, filepath.Join(e.WS, "ex.pid"))
	bg := waitPid(t, filepath.Join(e.WS, "bg.pid"))
	nh := waitPid(t, filepath.Join(e.WS, "nohup.pid"))
	job := waitPid(t, filepath.Join(e.WS, "job.pid"))
	pipe := waitGroup(t, sh, 4) // the two sleeps, the nohup'd one, the pipeline's two
	survivors := append([]int{bg, nh, job}, pipe...)
	for _, pid := range survivors {
		defer syscall.Kill(pid, syscall.SIGKILL)
	}
	defer syscall.Kill(sh, syscall.SIGKILL)
	defer syscall.Kill(ex, syscall.SIGKILL)
	r.Cmd.Process.Kill()
	if !r.Exited(5 * time.Second) {
		t.Fatal("clawd did not die of SIGKILL")
	}
	waitGone(t, sh)
	waitGone(t, ex)
	time.Sleep(100 * time.Millisecond)
	for _, pid := range survivors {
		if !runstate.Alive(pid) {
			t.Fatalf("process %d, forked by the shell, died with clawd: nothing left for the next start to end", pid)
		}
	}

	r2 := e.Stdio()
	r2.Initialize("claude-code")
	for _, pid := range survivors {
		waitGone(t, pid)
	}
}

// waitGroup waits until group pgid (a shell that died or will) has at least
// n members besides its leader and returns them.
func waitGroup(t *testing.T, pgid, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var members []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == pgid {
				continue
			}
			if st, err := proc.ReadStat(pid); err == nil && st.Pgid == pgid {
				members = append(members, pid)
			}
		}
		if len(members) >= n || time.Now().After(deadline) {
			if len(members) < n {
				t.Fatalf("group %d has members %v, want %d", pgid, members, n)
			}
			return members
		}
		time.Sleep(10 * time.Millisecond)
	}
}
