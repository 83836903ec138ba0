//go:build unix

package upstream

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRefreshReturnsOnceConnected: when Refresh returns nil, Status already
// says connected with the tools listed (the REST API and `clawd mcp
// refresh` report that status right after). Before the fix the reply
// overtook installing the new session, and Status still said stale.
func TestRefreshReturnsOnceConnected(t *testing.T) {
	m, _ := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{fake("fake")})
	waitFor(t, m, "fake", 10*time.Second, "connected", func(s Status) bool { return s.State == StateConnected })
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := m.Refresh(ctx, "fake")
		cancel()
		if err != nil {
			t.Fatalf("refresh %d: %v", i, err)
		}
		st := m.Status()[0]
		if st.State != StateConnected || st.ToolCount == 0 {
			t.Fatalf("refresh %d returned nil but the status is %s with %d tools", i, st.State, st.ToolCount)
		}
	}
}

// TestRefreshReturnsOnceFailed: when a Refresh fails, Status already says
// why (unavailable for a refused launch) rather than still connecting.
// The daemon's retries read that state the moment Refresh returns to
// decide whether to try again; before the fix the reply overtook the
// state, and an owed retry was sometimes dropped.
func TestRefreshReturnsOnceFailed(t *testing.T) {
	refuse := func(string, Launch) error { return errors.New("not approved") }
	m, _ := newTestManager(t, Options{VerifyLaunch: refuse})
	m.Apply(context.Background(), []ServerConfig{fake("refused")})
	waitFor(t, m, "refused", 10*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	for i := range 500 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := m.Refresh(ctx, "refused")
		cancel()
		if err == nil {
			t.Fatalf("refresh %d of a refused launch returned nil", i)
		}
		if st := m.Status()[0]; st.State != StateUnavailable {
			t.Fatalf("refresh %d returned %q but the status is %s", i, err, st.State)
		}
	}
}
