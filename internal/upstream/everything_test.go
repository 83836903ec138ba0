//go:build unix

package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/tools"
)

// everythingBin is @modelcontextprotocol/server-everything installed from
// npm into the test cache, where .ci/run installs it (test/clawdtest's
// NPMUpstreams names the version):
//
//	npm install --prefix ~/.cache/clawd-test-npm @modelcontextprotocol/server-everything@2026.8.31
func everythingBin(t *testing.T) string {
	dir := os.Getenv("CLAWD_TEST_NPM")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "clawd-test-npm")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("server-everything is not installed (%v); install it with: npm install --prefix %s @modelcontextprotocol/server-everything@2026.8.31",
			err, dir)
	}
	return bin
}

// The reference server from npm over stdio: it connects, its tools are
// listed under everything__*, echo and the tiny image pass through, and
// Close leaves none of its processes behind.
func TestServerEverythingStdio(t *testing.T) {
	t.Parallel()
	bin := everythingBin(t)
	m, reg := newTestManager(t, Options{})
	cfg := ServerConfig{Name: "everything", Transport: TransportStdio, Command: bin, Args: []string{"stdio"},
		Enabled: true, ConnectTimeout: 60 * time.Second}
	m.Apply(context.Background(), []ServerConfig{cfg})
	st := waitFor(t, m, "everything", 60*time.Second, "connected", func(s Status) bool { return s.State == StateConnected })
	if st.ToolCount < 5 {
		t.Errorf("%d tools: %+v", st.ToolCount, st.Tools)
	}
	if got := callText(t, reg, "everything__echo", `{"message":"hi from clawd"}`); !strings.Contains(got, "Echo: hi from clawd") {
		t.Errorf("echo: %s", got)
	}
	res, err := call(t, reg, "everything__get-tiny-image", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if c := string(res.(*tools.CallResult).Content); !strings.Contains(c, `"type":"image"`) || !strings.Contains(c, `"mimeType":"image/png"`) {
		t.Errorf("tiny image content: %.300s", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	gone(t, st.PID, "server-everything after Close")
}
