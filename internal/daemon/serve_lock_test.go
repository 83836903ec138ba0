package daemon

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/test/clawdtest"
)

// TestServeTCPOneDaemonPerWorkspace starts a second loopback daemon for a
// workspace whose first one serves but has no state file another process
// would take for a live daemon: the state of two daemons starting at once,
// each checking before the other wrote its file (here the check does not
// apply either: both are this process). The second must refuse to start, not
// serve beside the first and overwrite its state and token files.
func TestServeTCPOneDaemonPerWorkspace(t *testing.T) {
	clawdtest.IsolateHome(t)
	ws := t.TempDir()
	open := func() *Daemon {
		d, err := New(Options{Workspace: ws})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	d1, d2 := open(), open()
	statePath := runstate.Path(d1.Paths.DataDir, d1.WorkspaceID, runstate.TCP)

	ctx1, stop1 := context.WithCancel(context.Background())
	done1 := make(chan error, 1)
	go func() { done1 <- d1.ServeTCP(ctx1, TCPOptions{Port: 0, Stderr: io.Discard}) }()
	defer func() {
		stop1()
		select {
		case <-done1:
		case <-time.After(30 * time.Second):
			t.Error("the first daemon did not stop")
		}
	}()
	first := waitStateFile(t, statePath, "", done1)

	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	done2 := make(chan error, 1)
	go func() { done2 <- d2.ServeTCP(ctx2, TCPOptions{Port: 0, Stderr: io.Discard}) }()
	// Either the second daemon refuses, or it serves and names itself in
	// the state file.
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-done2:
			if err == nil || !strings.Contains(err.Error(), "already running for this workspace") {
				t.Fatalf("second daemon: %v, want an error saying clawd is already running for this workspace", err)
			}
			if st, err := runstate.Read(statePath); err != nil || st.Addr != first.Addr {
				t.Errorf("state file after the refusal: %+v, %v; want the first daemon's (%s)", st, err, first.Addr)
			}
			return
		default:
		}
		if st, err := runstate.Read(statePath); err == nil && st.Addr != first.Addr {
			stop2()
			<-done2
			t.Fatalf("a second daemon serves the workspace on %s beside the first on %s", st.Addr, first.Addr)
		}
		if time.Now().After(deadline) {
			t.Fatal("the second daemon neither refused nor served within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStateFile polls path until it holds a state whose Addr is not notAddr,
// failing if done reports first or 30 s pass.
func waitStateFile(t *testing.T, path, notAddr string, done <-chan error) *runstate.State {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := runstate.Read(path); err == nil && st.Addr != notAddr {
			return st
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("the daemon stopped before writing its state file: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no state file at %s within 30 s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
