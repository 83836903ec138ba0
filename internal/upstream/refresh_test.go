//go:build unix

package upstream

import (
	"context"
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
