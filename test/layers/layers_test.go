// Package layers checks that imports follow the one-way flow of
// docs/architecture.md: transport -> jsonrpc -> mcp -> chain -> tools ->
// providers, with the support libraries as leaves. A change that makes a
// lower layer reach up (the chain linking in a tool, the daemon importing
// the CLI's client) fails here instead of in a review.
package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/clawde/clawd/"

// rules: the packages each package (with everything it imports) must not
// depend on. A trailing "/" forbids the whole subtree.
var rules = []struct {
	pkg       string
	forbidden []string
	why       string
}{
	{"internal/jsonrpc", []string{"internal/chain", "internal/mcp", "internal/transport", "internal/tools", "internal/builtin", "internal/store", "internal/daemon", "internal/config", "internal/cli/", "internal/runstate", "internal/sandbox", "internal/upstream"}, "the wire format knows nothing of clawd but the support libraries"},
	{"internal/tools", []string{"internal/chain", "internal/mcp", "internal/transport", "internal/builtin", "internal/store", "internal/daemon"}, "the tool contract sits below everything that uses it"},
	{"internal/chain", []string{"internal/builtin", "internal/mcp", "internal/transport", "internal/store", "internal/daemon", "internal/config"}, "deciding about a call never links in a tool or a protocol"},
	{"internal/mcp", []string{"internal/builtin", "internal/transport", "internal/store", "internal/daemon"}, "the protocol layer serves any provider over any transport"},
	{"internal/transport", []string{"internal/builtin", "internal/store", "internal/daemon", "internal/cli/"}, "transports carry sessions; the daemon wires them"},
	{"internal/builtin", []string{"internal/chain", "internal/mcp", "internal/transport", "internal/store", "internal/daemon"}, "a tool knows nothing of who calls it or how"},
	{"internal/store", []string{"internal/mcp", "internal/transport", "internal/builtin", "internal/daemon"}, "the store is on the side of the chain"},
	{"internal/upstream", []string{"internal/chain", "internal/mcp", "internal/transport", "internal/jsonrpc", "internal/builtin", "internal/store", "internal/daemon", "internal/config", "internal/cli/"}, "an upstream is a provider: it knows the tool contract, not who calls it; the daemon gives it its configuration"},
	{"internal/daemon", []string{"internal/cli/"}, "the daemon must not import the CLI's client"},
	{"internal/restapi", []string{"internal/transport", "internal/mcp", "internal/builtin", "internal/daemon", "internal/cli/"}, "the REST API works on the store and the upstream manager; the transport in front of it and the daemon that mounts it stay out"},
	{"internal/transport", []string{"internal/restapi", "internal/upstream"}, "the transport serves the API the daemon hands it, without knowing what it does"},
	{"internal/support/...", []string{"internal/chain", "internal/mcp", "internal/transport", "internal/tools", "internal/builtin", "internal/store", "internal/daemon", "internal/config", "internal/cli/", "internal/runstate", "internal/sandbox", "internal/jsonrpc"}, "support libraries are leaves"},
}

func TestImportsFlowOneWay(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not in PATH")
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list %s listed nothing", r.pkg)
		}
		for _, d := range deps {
			rel, ok := strings.CutPrefix(d, module)
			if !ok || rel == r.pkg || strings.HasPrefix(rel, strings.TrimSuffix(r.pkg, "...")) && strings.HasSuffix(r.pkg, "...") {
				continue // the package itself, or one of the subtree under test
			}
			for _, f := range r.forbidden {
				if rel == f || strings.HasSuffix(f, "/") && strings.HasPrefix(rel, f) {
					t.Errorf("%s depends on %s: %s", r.pkg, rel, r.why)
				}
			}
		}
	}
}
