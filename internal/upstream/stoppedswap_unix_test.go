//go:build unix

package upstream

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A replacement is swapped in and its supervisor started after the lock is
// released, so the server may already be stopped (removed, disabled,
// changed again, or clawd closing) when run starts with the connected
// session. run must then close that session without installing it: not
// report the stopped server connected, nor leave its process running.
func TestRunOfStoppedServerClosesFirst(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var connects int
	m, _ := newTestManager(t, Options{OnEvent: func(ev Event) {
		if ev.Kind == EventConnect {
			mu.Lock()
			connects++
			mu.Unlock()
		}
	}})
	s := newServer(m, fake("sw"), nil)
	s.resolveOrigin()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sess, ts, err := s.attempt(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := sess.pid()
	s.stopOnce.Do(func() { close(s.stop) })
	ran := make(chan struct{})
	go func() {
		s.run(sess, ts)
		close(ran)
	}()
	select {
	case <-ran:
	case <-time.After(20 * time.Second):
		t.Fatal("run of a stopped server did not return")
	}
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the process of a session handed to a stopped server is still running (pid %d)", pid)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if connects != 0 {
		t.Errorf("a stopped server reported %d connects", connects)
	}
	if st := s.status(); st.State == StateConnected {
		t.Errorf("a stopped server says %s", st.State)
	}
}
