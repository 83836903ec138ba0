package chain_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// loadResult is what a load run saw: every response read from the child.
type loadResult struct {
	pid      int
	answered map[string]string // request id -> "ok" | "deny" | other
}

// load drives a `clawd serve` child with pipelined tools/call requests
// (up to inflight at once; every third one is a sandbox denial) until
// stop() is true or n responses arrived, then returns what was answered.
// With kill set, the reader kills the child (SIGKILL) right after reading
// response number killAt, and keeps reading what the child had already
// written.
func load(t *testing.T, e *env, n, inflight, killAt int) loadResult {
	t.Helper()
	p := e.Stdio()
	p.Initialize("x")
	// Take over the session: raw writes and reads on the client.
	res := loadResult{pid: p.Cmd.Process.Pid, answered: map[string]string{}}
	sem := make(chan struct{}, inflight)
	var stopped atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // sender
		defer wg.Done()
		for i := 1; i <= n && !stopped.Load(); i++ {
			sem <- struct{}{}
			path := "a.txt"
			if i%3 == 0 {
				path = "../outside/secret"
			}
			// A write error (the child was killed) ends the sender.
			if p.WriteRaw(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"r%d","method":"tools/call","params":{"name":"read_file","arguments":{"path":%q}}}`+"\n", i, path)) != nil {
				return
			}
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for len(res.answered) < n {
		line, err := p.ReadLine(time.Until(deadline))
		if err == clawdtest.ErrTimeout {
			t.Fatalf("load: only %d of %d responses within 60 s", len(res.answered), n)
		}
		if err != nil {
			break // the child is gone and its output drained
		}
		var m struct {
			ID     *string         `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.ID == nil {
			continue // a notification
		}
		switch {
		case m.Error != nil && m.Error.Code == -32005:
			res.answered[*m.ID] = "deny"
		case m.Result != nil:
			res.answered[*m.ID] = "ok"
		default:
			res.answered[*m.ID] = string(line)
		}
		select {
		case <-sem:
		default:
		}
		if killAt > 0 && len(res.answered) == killAt {
			stopped.Store(true)
			p.Cmd.Process.Kill() // SIGKILL: no deferred Close, no flush
			go func() {          // unblock the sender
				for range sem {
				}
			}()
		}
	}
	stopped.Store(true)
	p.Stdin.Close()
	wg.Wait()
	p.Wait(10 * time.Second)
	return res
}

// TestCrashLosesNoAnsweredDecision kills a loaded child with SIGKILL at
// several points; every response it had sent (read before or after the
// kill) must have its audit row, with the right result, committed.
func TestCrashLosesNoAnsweredDecision(t *testing.T) {
	for _, killAt := range []int{1, 137, 1500} {
		t.Run(strconv.Itoa(killAt), func(t *testing.T) {
			e := newEnv(t)
			res := load(t, e, 1_000_000, 64, killAt)
			if len(res.answered) < killAt {
				t.Fatalf("only %d responses before the kill", len(res.answered))
			}
			rows := e.auditRows(t, res.pid)
			byID := map[string]string{}
			for _, r := range rows {
				byID[r.RequestID] = r.Result
			}
			missing := 0
			for id, kind := range res.answered {
				want := map[string]string{"ok": "Allow", "deny": "Deny"}[kind]
				if want == "" {
					t.Fatalf("unexpected response to %s: %s", id, kind)
				}
				got, ok := byID[`"`+id+`"`]
				if !ok {
					missing++
					continue
				}
				if got != want {
					t.Errorf("request %s answered %s but its row says %s", id, kind, got)
				}
			}
			if missing > 0 {
				t.Fatalf("%d of %d answered calls have no audit row after kill -9", missing, len(res.answered))
			}
			t.Logf("killed after %d responses; %d answered, %d rows on disk (rows >= answered: decisions of unanswered calls)", killAt, len(res.answered), len(rows))
		})
	}
}

// TestConcurrentCallers: two clawd processes on one database, each with 64
// calls in flight; every call is answered and audited exactly once.
func TestConcurrentCallers(t *testing.T) {
	e := newEnv(t)
	const n = 1500
	var wg sync.WaitGroup
	results := make([]loadResult, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = load(t, e, n, 64, 0)
		}()
	}
	wg.Wait()
	for _, res := range results {
		if len(res.answered) != n {
			t.Fatalf("process %d answered %d of %d", res.pid, len(res.answered), n)
		}
		rows := e.auditRows(t, res.pid)
		if len(rows) != n {
			t.Errorf("process %d: %d audit rows for %d calls", res.pid, len(rows), n)
		}
		seen := map[string]int{}
		for _, r := range rows {
			seen[r.RequestID]++
		}
		for id, kind := range res.answered {
			if kind != "ok" && kind != "deny" {
				t.Errorf("process %d: response to %s: %s", res.pid, id, kind)
			}
			if seen[`"`+id+`"`] != 1 {
				t.Errorf("process %d: request %s has %d rows", res.pid, id, seen[`"`+id+`"`])
			}
		}
	}
}
