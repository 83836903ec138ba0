package store

import (
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// While one fold waits on a database another process keeps locked (each
// attempt waits out BusyTimeout), the fold timer keeps firing for the
// decisions that come meanwhile. Those firings must not queue a fold each:
// every queued fold waited its own BusyTimeout in turn, during the run and
// again at shutdown, so a daemon stopped with the database locked took 5 s
// per call made while it was locked to exit. Here the first fold blocks,
// eight more decisions fire the timer, and Close must then try the
// database no more than twice more (its own fold, and at most one that had
// already started), not once per decision.
func TestAuditFoldsDoNotQueueBehindABlockedFold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	db := openTest(t, path)
	w, err := db.Audit()
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var calls atomic.Int32
	w.foldMu.Lock()
	w.failWrite = func() error {
		if calls.Add(1) == 1 {
			<-release
		}
		return errors.New("database is locked (by the test)")
	}
	w.foldMu.Unlock()

	poll := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited 30 s for %s", what)
			}
		}
	}
	timerFired := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return !w.armed
	}
	if _, err := w.Record(auditRecord(1)); err != nil {
		t.Fatal(err)
	}
	poll("the first fold to reach the database", func() bool { return calls.Load() == 1 })
	for i := 2; i <= 9; i++ {
		if _, err := w.Record(auditRecord(i)); err != nil {
			t.Fatal(err)
		}
		poll("the fold timer to fire", timerFired)
	}

	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	poll("Close to begin", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.closed
	})
	close(release)
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return within 30 s")
	}
	if n := calls.Load(); n > 3 {
		t.Errorf("the database was tried %d times: a fold queued per decision while the first one waited; want at most 3", n)
	}
}
