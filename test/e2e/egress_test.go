package e2e

import (
	"strings"
	"testing"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestEgressCommands: clawd egress allow|list|rm, their usage errors (exit
// 2, nothing stored, the fix named) and mcp add --http's proposal.
func TestEgressCommands(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"egress", "allow", "https://mcp.example.com/mcp"}, "give just https://mcp.example.com:443"},
		{[]string{"egress", "allow", "mcp.example.com"}, "scheme://host"},
		{[]string{"egress", "allow", "http://0x7f.1:8080"}, "write it as 127.0.0.1"},
		{[]string{"egress", "allow", "http://10.1.2.3:8080"}, "clawd egress allow --private http://10.1.2.3:8080"},
		{[]string{"egress", "allow", "--private", "http://0.0.0.0:8080"}, "never connects"},
		{[]string{"egress", "allow"}, "ORIGIN"},
		{[]string{"egress", "rm", "ftp://x"}, "http or https"},
		{[]string{"mcp", "add", "r", "--http", "http://017700000001/mcp"}, "legacy form"},
		{[]string{"mcp", "add", "r", "--http", "http://10.0.0.1/mcp", "--allow"}, "--allow: 10.0.0.1 is a private-network address"},
		{[]string{"mcp", "add", "r", "--http", "https://a.example/mcp", "--private"}, "--private goes with --allow"},
		{[]string{"audit", "--server", "a__b"}, "--server"},
	} {
		out, errs, code := e.Run(tc.args...)
		if code != 2 || !strings.Contains(errs, tc.msg) {
			t.Errorf("clawd %s: exit %d, stderr %q, stdout %q; want exit 2 naming %q", strings.Join(tc.args, " "), code, errs, out, tc.msg)
		}
	}
	if out := e.MustRun("egress", "list", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("usage errors stored something: %s", out)
	}
	if out := e.MustRun("mcp", "list", "--json"); strings.Contains(out, `"r"`) {
		t.Errorf("a refused mcp add stored the server: %s", out)
	}

	out := e.MustRun("egress", "allow", "HTTPS://Bücher.Example./")
	if !strings.Contains(out, "allowed egress to https://xn--bcher-kva.example:443") {
		t.Errorf("egress allow: %q", out)
	}
	if out := e.MustRun("egress", "allow", "https://xn--bcher-kva.example:443"); !strings.Contains(out, "it was already") {
		t.Errorf("the same origin in another spelling is a second entry: %q", out)
	}
	e.MustRun("egress", "allow", "--private", "http://10.1.2.3:8080")
	list := mustJSON[[]map[string]any](t, e.MustRun("egress", "list", "--json"))
	if len(list) != 2 || list[0]["origin"] != "http://10.1.2.3:8080" || list[0]["private"] != true ||
		list[1]["origin"] != "https://xn--bcher-kva.example:443" || list[1]["private"] != false {
		t.Errorf("egress list: %v", list)
	}
	if out := e.MustRun("egress", "list"); !strings.Contains(out, "http://10.1.2.3:8080") || !strings.Contains(out, "allowed") {
		t.Errorf("egress list:\n%s", out)
	}

	// mcp add --http proposes the entry, or adds it with --allow.
	out = e.MustRun("mcp", "add", "svc", "--http", "https://svc.example/mcp")
	if !strings.Contains(out, "  clawd egress allow https://svc.example:443\n") {
		t.Errorf("mcp add --http did not propose the entry:\n%s", out)
	}
	out = e.MustRun("mcp", "add", "local", "--http", "http://192.168.1.9:9000/mcp")
	if !strings.Contains(out, "clawd egress allow --private http://192.168.1.9:9000") {
		t.Errorf("the proposal for a private address lacks --private:\n%s", out)
	}
	_, errs, _ := e.Run("mcp", "add", "svc2", "--http", "https://svc2.example/mcp", "--allow", "--json")
	if !strings.Contains(errs, "allowed egress to https://svc2.example:443") {
		t.Errorf("mcp add --allow --json: stderr %q", errs)
	}
	if out := e.MustRun("mcp", "add", "svc3", "--http", "https://svc2.example/other"); strings.Contains(out, "egress allow") {
		t.Errorf("proposed an origin that is allowed already:\n%s", out)
	}

	if _, errs, code := e.Run("egress", "rm", "https://nothere.example"); code != 1 || !strings.Contains(errs, "not on the egress allowlist") {
		t.Errorf("egress rm of a missing origin: exit %d %q", code, errs)
	}
	e.MustRun("egress", "rm", "http://10.1.2.3:8080/")
	rows := mustJSON[[]map[string]any](t, e.MustRun("audit", "--limit", "0", "--json"))
	var reasons []string
	for _, r := range rows {
		if r["entity_id"] == "local:cli" && strings.HasPrefix(r["tool_id"].(string), "egress:") {
			reasons = append(reasons, r["result"].(string)+" "+r["reason"].(string))
		}
	}
	want := []string{
		"Allow approve: egress to https://xn--bcher-kva.example:443",
		"Allow approve: egress to http://10.1.2.3:8080 (private addresses allowed)",
		"Allow approve: egress to https://svc2.example:443",
		"Deny approve: egress to http://10.1.2.3:8080 withdrawn",
	}
	if strings.Join(reasons, "|") != strings.Join(want, "|") {
		t.Errorf("egress audit rows:\n%s\nwant\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
	}
}
