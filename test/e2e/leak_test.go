//go:build linux

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// buildFake builds the upstream package's misbehaving stdio server under a
// name of its own, so its processes can be counted by name.
func buildFake(t *testing.T) string {
	t.Helper()
	bin, err := clawdtest.BuildFakeUpstream(t.TempDir(), "leakfake")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// liveWith lists the living processes whose command line names s (a
// zombie's is empty, so zombies are not counted).
func liveWith(s string) []int {
	var out []int
	for _, p := range processesWith(s) {
		if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}

// waitCount polls until exactly want processes name bin, or fails.
func waitCount(t *testing.T, bin string, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := liveWith(bin)
		if len(got) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d upstream processes %v, want %d", what, len(got), got, want)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestUpstreamProcessesDoNotLeak is the process-leak cycle: add two stdio
// upstreams, then 20 times: start clawd serve, wait until both run,
// disable one and see it and everything it started gone (including a
// daemon it double-forked into a session of its own, which only the
// child subreaper can find), enable it again, kill -9 clawd. Every
// process an upstream starts names the fake's binary, so counting them is
// exact. After each restart the count is what one clean start gives; at
// the end a clean stop leaves none.
//
// "leak" keeps its parent-death signal and its mark: a kill -9 ends it
// and the next start's owner-token sweep ends what it left (a grandchild
// in its group, the daemon). "stubborn" clears both (it survives the
// kill -9 and nothing in its environment names clawd): only the pid and
// start time the daemon recorded find it, and its group with it.
func TestUpstreamProcessesDoNotLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("20 daemon restarts")
	}
	fake := buildFake(t)
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	hexSum := hex.EncodeToString(sum[:])
	dir := t.TempDir()
	e.MustRun("mcp", "add", "leak", "--stdio", "--", fake, "-grandchild", filepath.Join(dir, "g1"), "-daemonize", filepath.Join(dir, "d1"))
	e.MustRun("mcp", "add", "stubborn", "--stdio", "--", fake, "-no-pdeath", "-hide-mark", "-grandchild", filepath.Join(dir, "g2"))
	for _, s := range []string{"leak", "stubborn"} {
		e.MustRun("mcp", "allow", "--server", s, "--sha256", hexSum)
	}
	t.Cleanup(func() {
		for _, pid := range liveWith(fake) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	// Per start: leak + its grandchild + its daemon, stubborn + its
	// grandchild.
	const perStart = 5
	begin := time.Now()
	for cycle := 1; cycle <= 20; cycle++ {
		started := time.Now()
		d := clawdtest.ServeDaemon(t, e.Command("serve", "--transport", "unix_socket"))
		// Both connected to this daemon: its sweeps ran before it started
		// them, so what is counted now is what it left running.
		connectedSince(t, e, "leak", started)
		connectedSince(t, e, "stubborn", started)
		waitCount(t, fake, perStart, "cycle "+strconv.Itoa(cycle)+" after the start")

		e.MustRun("mcp", "disable", "leak")
		waitCount(t, fake, 2, "cycle "+strconv.Itoa(cycle)+" after disable (the daemon leak double-forked must go too)")
		e.MustRun("mcp", "enable", "leak")
		waitCount(t, fake, perStart, "cycle "+strconv.Itoa(cycle)+" after enable")

		before := liveWith(fake)
		d.Kill()
		// After the kill -9: leak died with clawd (parent-death signal),
		// the rest lingers until the next start.
		time.Sleep(50 * time.Millisecond)
		if got := liveWith(fake); len(got) >= len(before) && cycle == 1 {
			t.Logf("after kill -9: %d of %d still run (leak's grandchildren, stubborn)", len(got), len(before))
		}
	}
	started := time.Now()
	d := clawdtest.ServeDaemon(t, e.Command("serve", "--transport", "unix_socket"))
	connectedSince(t, e, "stubborn", started)
	waitCount(t, fake, perStart, "after the last restart")
	d.Stop()
	waitCount(t, fake, 0, "after a clean stop")
	t.Logf("20 cycles in %v", time.Since(begin).Round(time.Millisecond))
	if left, _ := os.ReadDir(filepath.Join(e.DataDir(), "upstream-procs-"+e.WorkspaceID())); slices.ContainsFunc(left, func(d os.DirEntry) bool { return strings.HasSuffix(d.Name(), ".json") }) {
		t.Errorf("records left after a clean stop: %v", left)
	}
}

// connectedSince waits until server's row says it connected after since
// (a killed daemon's last "connected" is still in the table).
func connectedSince(t *testing.T, e *clawdtest.Env, server string, since time.Time) {
	t.Helper()
	waitServer(t, e, server, func(s map[string]any) bool {
		at, _ := s["last_connected_at"].(string)
		when, err := time.Parse(time.RFC3339, at)
		return s["last_status"] == "connected" && err == nil && !when.Before(since.Truncate(time.Millisecond))
	})
}
