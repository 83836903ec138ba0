package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestUpstreamToolNameLimit: upstream_tool_name_max lowers the longest name
// an upstream tool is offered under (for a client that prefixes every
// name): with 20, the fake server's tools under a 21-character server name
// are all offered under hashed names of at most 20 characters that clients
// accept, and `clawd mcp test` shows the same names as the daemon.
func TestUpstreamToolNameLimit(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	e.WriteConfig("upstream_tool_name_max = 20\n")
	fake := fakeUpstream(t)
	const server = "a-rather-long-servera" // 21 characters: SERVER__TOOL never fits
	e.MustRun("mcp", "add", server, "--stdio", "--allow", "--", fake)
	e.Daemon("unix_socket")
	waitServer(t, e, server, func(s map[string]any) bool { return s["last_status"] == "connected" })

	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,20}$`)
	daemonNames := map[string]bool{}
	tools := mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", server, "--json"))
	if len(tools) == 0 {
		t.Fatal("no tools cached")
	}
	for _, tl := range tools {
		name, _ := tl["exposed"].(string)
		if name == "" {
			name, _ = tl["name"].(string)
		}
		if !valid.MatchString(name) {
			t.Errorf("tool offered as %q: want at most 20 of [A-Za-z0-9_-]", name)
		}
		daemonNames[name] = true
	}
	out := e.MustRun("mcp", "test", server, "--json")
	for name := range daemonNames {
		if !strings.Contains(out, `"`+name+`"`) {
			t.Errorf("mcp test does not show %s, the name the daemon offers:\n%s", name, out)
		}
	}
}
