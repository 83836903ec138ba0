//go:build unix

package upstream

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// What a stopped server's successor waits for is kept only while that
// server is stopping: servers added and removed under ever new names (mcp
// add and rm) leave no entry behind, running or disabled ones alike.
func TestRetiringStaysBounded(t *testing.T) {
	t.Parallel()
	m, _ := newTestManager(t, Options{})
	ctx := context.Background()
	for i := range 200 {
		cfg := fake(fmt.Sprintf("gone%d", i))
		cfg.Enabled = false
		m.Apply(ctx, []ServerConfig{cfg})
		m.Apply(ctx, nil)
	}
	for i := range 2 {
		name := fmt.Sprintf("ran%d", i)
		m.Apply(ctx, []ServerConfig{fake(name)})
		connected(t, m, name)
		m.Apply(ctx, nil)
	}
	retiring := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.retiring)
	}
	deadline := time.Now().Add(10 * time.Second)
	for retiring() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d names of removed servers are still held after their servers stopped", retiring())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
