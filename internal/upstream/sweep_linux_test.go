package upstream

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/proc"
)

// kill -9 of clawd: the parent-death signal ends the stdio server itself;
// the grandchild it started survives (it holds no tie to clawd), and the
// next start's SweepOrphans with the same token ends it, while another
// token's sweep leaves it alone.
func TestKill9Sweep(t *testing.T) {
	if os.Getenv("UPSTREAM_HELPER_FAKE") != "" {
		kill9Helper()
		return
	}
	t.Parallel()
	dir := t.TempDir()
	token := fmt.Sprintf("test-%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Sweep$")
	cmd.Env = append(os.Environ(), "UPSTREAM_HELPER_FAKE="+fakeBin, "UPSTREAM_HELPER_TOKEN="+token,
		"UPSTREAM_HELPER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var server, grand int
	if _, err := fmt.Fscan(out, &server, &grand); err != nil {
		cmd.Process.Kill()
		t.Fatalf("reading the helper's pids: %v", err)
	}
	defer syscall.Kill(grand, syscall.SIGKILL)
	cmd.Process.Kill() // kill -9 of "clawd"
	// Not reaped until the end: a killed clawd stays a zombie until its
	// parent reaps it (a slow host, a container's PID 1), and is dead all
	// the same.
	defer cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err := proc.ReadStat(cmd.Process.Pid); err == nil && st.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed helper did not become a zombie within 30 s")
		}
	}
	gone(t, server, "the stdio server after its clawd was killed")
	if !alive(grand) {
		t.Fatal("the grandchild died with clawd; the sweep below proves nothing")
	}
	if killed, err := SweepOrphans("some-other-workspace"); err != nil || slices.Contains(killed, grand) {
		t.Fatalf("a sweep with another token killed %v (%v)", killed, err)
	}
	killed, err := SweepOrphans(token)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(killed, grand) {
		t.Errorf("the sweep killed %v, not the orphaned grandchild %d", killed, grand)
	}
	gone(t, grand, "the orphaned grandchild after the sweep")
}

func kill9Helper() {
	dir := os.Getenv("UPSTREAM_HELPER_DIR")
	m := NewManager(nil, Options{OwnerToken: os.Getenv("UPSTREAM_HELPER_TOKEN")})
	m.Apply(context.Background(), []ServerConfig{fake("k", "-grandchild", filepath.Join(dir, "g"))})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st := m.Status(); len(st) == 1 && st[0].State == StateConnected {
			g, err := os.ReadFile(filepath.Join(dir, "g"))
			if err == nil && len(g) > 0 {
				fmt.Printf("%d %s\n", st[0].PID, g)
				time.Sleep(time.Minute)
			}
		}
	}
	os.Exit(1)
}

// TestOrphanedOnlyUnderADeadOwner: a mark names its token and the pid of
// the clawd that started it; only a dead owner's processes are orphans, so
// two live daemons of one workspace never sweep each other's servers.
func TestOrphanedOnlyUnderADeadOwner(t *testing.T) {
	alive := func(pid int) bool { return pid == 100 }
	for _, c := range []struct {
		value string
		want  bool
	}{
		{"tok.200", true},       // owner gone
		{"tok.100", false},      // owner alive: another daemon's server
		{"tok.42", false},       // our own (self = 42)
		{"other.200", false},    // another workspace
		{"tok", false},          // malformed
		{"tok.x", false},        // malformed
		{"tok.-5", false},       // malformed
		{"tok.200.300", true},   // with a spawn id
		{"tok.100.3", false},    // with a spawn id, owner alive
		{"tok.200.x", false},    // malformed
		{"tok.200.0", false},    // malformed
		{"tok.200.3.4", false},  // malformed
		{"tok.0200", false},     // malformed
		{"tokextra.200", false}, // a token that only shares a prefix
	} {
		if got := orphaned(c.value, "tok", 42, alive); got != c.want {
			t.Errorf("orphaned(%q) = %v, want %v", c.value, got, c.want)
		}
	}
	if orphaned("x.200", "", 42, alive) {
		t.Error("an empty token matched")
	}
}
