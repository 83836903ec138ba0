package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/upstream"
)

// retryUpstreams runs on WatchConfig's loop, before the egress recheck: a
// retry that takes its time (a remote server that does not answer waits
// its connect timeout) must not hold that loop, or a removed origin's
// connection outlives the removal by that long. Here the second check of
// the launch blocks until retryUpstreams has returned: retryUpstreams must
// return while it blocks, and the retry must still happen. A
// retryUpstreams that waited for the retry would wait the check's minute.
func TestRetryUpstreamsDoesNotWait(t *testing.T) {
	const stuck = time.Minute
	var checks atomic.Int32
	var once sync.Once
	release := make(chan struct{})
	retried := make(chan struct{})
	verify := func(string, upstream.Launch) error {
		if checks.Add(1) > 1 {
			select {
			case <-release:
			case <-time.After(stuck):
			}
			once.Do(func() { close(retried) })
		}
		return errors.New("not approved")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := daemonWithRefusedServer(t, ctx, verify)
	start := time.Now()
	d.retryUpstreams(ctx)
	if took := time.Since(start); took > stuck/2 {
		t.Errorf("retryUpstreams took %v: it waited for the retry instead of leaving it to run", took)
	}
	close(release)
	select {
	case <-retried:
	case <-time.After(stuck + 20*time.Second):
		t.Fatal("the retry never checked the launch again")
	}
}

// Changes that come faster than a retry takes owe the server one more
// retry, not one each: a change and four more during its slow check of
// the launch make two retries (the one running and one after it, which
// sees the allowlist as the last change left it), not five queued
// reconnects.
func TestRetryUpstreamsCoalesces(t *testing.T) {
	const slow = 1500 * time.Millisecond
	var checks atomic.Int32
	verify := func(string, upstream.Launch) error {
		if checks.Add(1) > 1 {
			time.Sleep(slow)
		}
		return errors.New("not approved")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := daemonWithRefusedServer(t, ctx, verify)
	d.retryUpstreams(ctx)
	// The other four changes come while the retry checks the launch, when
	// the server shows as connecting, not unavailable: they still owe it
	// one more retry, since the check may have read the allowlist before
	// them.
	deadline := time.Now().Add(30 * time.Second)
	for checks.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the retry never checked the launch")
		}
		time.Sleep(time.Millisecond)
	}
	for range 4 {
		d.retryUpstreams(ctx)
	}
	for checks.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d checks of the launch, want 3 (the start, the retry, the one owed)", checks.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * slow) // a queued retry beyond the owed one would check by now
	if n := checks.Load(); n != 3 {
		t.Errorf("%d checks of the launch after five changes, want 3 (the start, the retry, the one owed)", n)
	}
	d.retries.mu.Lock()
	left := len(d.retries.owed)
	d.retries.mu.Unlock()
	if left != 0 {
		t.Errorf("%d server(s) still marked as being retried after the retries ended", left)
	}
}

// daemonWithRefusedServer is a daemon whose one stdio server "slow" is
// unavailable: verify refuses its launch (a retry calls it again).
func daemonWithRefusedServer(t *testing.T, ctx context.Context, verify func(string, upstream.Launch) error) *Daemon {
	t.Helper()
	m := startManager(t, nil, upstream.Options{VerifyLaunch: verify})
	m.Apply(ctx, []upstream.ServerConfig{{Name: "slow", Transport: upstream.TransportStdio, Command: "/bin/true",
		Enabled: true, ConnectTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second}})
	waitState(t, m, "slow", upstream.StateUnavailable)
	d := &Daemon{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	d.upstreams.Store(m)
	return d
}
