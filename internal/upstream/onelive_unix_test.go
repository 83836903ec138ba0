//go:build unix

package upstream

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// liveWith lists the living processes whose command line has arg.
func liveWith(arg string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte("\x00"+arg+"\x00")) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// Disabling a server and enabling it again at once (or removing and
// adding it) must not run its new process beside the old one while the old
// one is still being stopped: a server that ignores SIGTERM and outlives
// its stdin takes the whole graceful stop to end, and a quick toggle would
// otherwise leave two (or, toggled again, more) processes of one server.
func TestToggleNeverRunsTwo(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc")
	}
	t.Parallel()
	marker := fmt.Sprintf("toggle-%d", time.Now().UnixNano())
	m, _ := newTestManager(t, Options{StopGrace: time.Second})
	on := fake("tg", "-linger", "-print-env", marker)
	off := on
	off.Enabled = false
	m.Apply(context.Background(), []ServerConfig{on})
	connected(t, m, "tg")
	m.Apply(context.Background(), []ServerConfig{off})
	m.Apply(context.Background(), []ServerConfig{on})
	m.Apply(context.Background(), nil)
	m.Apply(context.Background(), []ServerConfig{on})
	deadline := time.Now().Add(8 * time.Second)
	most := 0
	for time.Now().Before(deadline) {
		n := len(liveWith(marker))
		most = max(most, n)
		for _, st := range m.Status() {
			if st.Name == "tg" && st.State == StateConnected && n == 1 && time.Now().After(deadline.Add(-3*time.Second)) {
				deadline = time.Now() // settled
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if most > 1 {
		t.Errorf("%d processes of one server ran at once", most)
	}
	connected(t, m, "tg")
	m.Apply(context.Background(), nil)
	for deadline := time.Now().Add(10 * time.Second); len(liveWith(marker)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left after the server was removed: %v", liveWith(marker))
		}
	}
}

// Changing a connected server's configuration connects the new one beside
// it; changing it again while that one is still connecting must not add a
// third process (and a fourth...): a superseded replacement is abandoned
// before the next one starts, and disabling the server abandons it too.
func TestQuickEditsNeverPileUp(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc")
	}
	t.Parallel()
	marker := fmt.Sprintf("edits-%d", time.Now().UnixNano())
	m, _ := newTestManager(t, Options{StopGrace: 200 * time.Millisecond})
	base := fake("ed", "-print-env", marker)
	m.Apply(context.Background(), []ServerConfig{base})
	connected(t, m, "ed")
	most := 0
	count := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			most = max(most, len(liveWith(marker)))
		}
	}
	for i := range 4 {
		edit := fake("ed", "-print-env", marker, "-hang-init", "-desc-bytes", strconv.Itoa(i+1))
		m.Apply(context.Background(), []ServerConfig{edit})
		count(300 * time.Millisecond)
	}
	if most > 2 {
		t.Errorf("%d processes of one server ran at once while its configuration changed", most)
	}
	most = 0
	off := base
	off.Enabled = false
	m.Apply(context.Background(), []ServerConfig{off})
	m.Apply(context.Background(), []ServerConfig{base})
	connected(t, m, "ed")
	count(500 * time.Millisecond)
	if most > 1 {
		t.Errorf("%d processes of one server ran at once after it was disabled and enabled", most)
	}
}

// Renaming a server (the REST API's PUT with a new name, also one that
// only changes case) is the same server under another name: its new
// process must not start beside the old one while that one is still being
// stopped, as for a quick disable and enable.
func TestRenameNeverRunsTwo(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc")
	}
	t.Parallel()
	marker := fmt.Sprintf("rename-%d", time.Now().UnixNano())
	m, _ := newTestManager(t, Options{StopGrace: time.Second})
	cfg := fake("rn", "-linger", "-print-env", marker)
	cfg.ID = 7
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "rn")
	most := 0
	for _, name := range []string{"RN", "other"} {
		cfg.Name = name
		m.Apply(context.Background(), []ServerConfig{cfg})
		// Until the renamed server is connected (the old process then
		// has ended), never two at once; generous for a loaded machine.
		deadline := time.Now().Add(20 * time.Second)
		for {
			most = max(most, len(liveWith(marker)))
			st, ok := m.StatusOf(name)
			if ok && st.State == StateConnected {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not connected after the rename: %+v", name, st)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if most > 1 {
		t.Errorf("%d processes of one server ran at once after it was renamed", most)
	}
	m.Apply(context.Background(), nil)
	for deadline := time.Now().Add(10 * time.Second); len(liveWith(marker)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left after the server was removed: %v", liveWith(marker))
		}
	}
}
