//go:build unix

package upstream

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Each server's status shows the exposed names of its own tools, and only
// those, when several servers list tools of the same names.
func TestStatusNamesPerServer(t *testing.T) {
	t.Parallel()
	m, _ := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{fake("fa"), fake("fb")})
	for _, name := range []string{"fa", "fb"} {
		named := func(st Status) bool {
			if st.State != StateConnected || len(st.Tools) == 0 {
				return false
			}
			for _, ti := range st.Tools {
				if ti.Exposed == "" {
					return false
				}
			}
			return true
		}
		st := waitFor(t, m, name, 20*time.Second, "connected with every tool named", named)
		for _, ti := range st.Tools {
			if !strings.HasPrefix(ti.Exposed, name+"__") {
				t.Errorf("server %s: tool %q exposed as %q, want the prefix %s__", name, ti.Original, ti.Exposed, name)
			}
		}
	}
	if got := m.namesOf("nosuch"); len(got) != 0 {
		t.Errorf("namesOf(an unknown server) = %v, want none", got)
	}
}
