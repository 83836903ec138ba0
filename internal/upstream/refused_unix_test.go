//go:build unix

package upstream

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// cfgOf is the configuration name's server runs now.
func cfgOf(m *Manager, name string) ServerConfig {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.servers[name]; s != nil {
		return s.cfg
	}
	return ServerConfig{}
}

// A changed configuration that could not be applied (its command not
// approved) leaves the old one serving, and its last error gives the
// `clawd mcp allow` line. Doing what it says must apply the new
// configuration: the daemon's retry after an allowlist change
// (RetryRefused), and `clawd mcp refresh` of the server, which must try
// the stored configuration rather than reconnect the old one.
func TestRefusedReplacementIsRetried(t *testing.T) {
	t.Parallel()
	var allowed atomic.Bool
	m, _ := newTestManager(t, Options{VerifyLaunch: func(_ string, l Launch) error {
		if !allowed.Load() && slices.Contains(l.Command, "-desc-bytes") {
			return &errConfig{err: errors.New("not approved (test)")}
		}
		return nil
	}})
	ctx := context.Background()
	base := fake("rf")
	m.Apply(ctx, []ServerConfig{base})
	connected(t, m, "rf")

	for i, retry := range []func() error{
		func() error { m.RetryRefused(ctx); return nil },
		func() error { return m.Refresh(ctx, "rf") },
	} {
		allowed.Store(false)
		edit := fake("rf", "-desc-bytes", strings.Repeat("1", i+1))
		m.Apply(ctx, []ServerConfig{edit})
		waitFor(t, m, "rf", 20*time.Second, "refused the new configuration", func(st Status) bool {
			return strings.Contains(st.LastError, "not applied")
		})
		if cfgOf(m, "rf").equal(edit) {
			t.Fatal("the refused configuration runs")
		}
		if i == 1 {
			// Still refused: a refresh says so, and does not restart the
			// old configuration as if it were the stored one.
			pid := connected(t, m, "rf").PID
			if err := m.Refresh(ctx, "rf"); err == nil || !strings.Contains(err.Error(), "not approved (test)") {
				t.Fatalf("refresh of a still refused configuration: %v", err)
			}
			if st := connected(t, m, "rf"); st.PID != pid {
				t.Errorf("refresh restarted the old configuration (pid %d, was %d)", st.PID, pid)
			}
		}
		allowed.Store(true)
		if err := retry(); err != nil {
			t.Fatalf("retry %d: %v", i, err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for !cfgOf(m, "rf").equal(edit) {
			if time.Now().After(deadline) {
				st, _ := m.StatusOf("rf")
				t.Fatalf("retry %d: the approved configuration was never applied; status %s: %s", i, st.State, st.LastError)
			}
			time.Sleep(10 * time.Millisecond)
		}
		connected(t, m, "rf")
	}
}

// A refresh while a changed configuration is still connecting (an edit a
// moment ago, or a refused one another refresh of every server retries in
// parallel) answers with that configuration's outcome: it neither restarts
// the old process nor says connected while the old configuration serves.
func TestRefreshDuringReplacementWaitsForIt(t *testing.T) {
	t.Parallel()
	m, _ := newTestManager(t, Options{})
	ctx := context.Background()
	m.Apply(ctx, []ServerConfig{fake("rp")})
	pid := connected(t, m, "rp").PID
	edit := fake("rp", "-list-delay", "1s")
	m.Apply(ctx, []ServerConfig{edit})
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := m.Refresh(rctx, "rp"); err != nil {
		t.Fatal(err)
	}
	if !cfgOf(m, "rp").equal(edit) {
		st, _ := m.StatusOf("rp")
		t.Fatalf("refresh returned with the old configuration serving (%s, pid %d, was %d)", st.State, st.PID, pid)
	}
}
