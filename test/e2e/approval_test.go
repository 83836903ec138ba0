package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

var (
	fakeOnce sync.Once
	fakeBin  string
	fakeErr  error
)

// fakeUpstream builds internal/upstream's misbehaving MCP server once.
func fakeUpstream(t *testing.T) string {
	t.Helper()
	fakeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "clawd-e2e-fake-")
		if err != nil {
			fakeErr = err
			return
		}
		os.Chmod(dir, 0o755)
		fakeBin, fakeErr = clawdtest.BuildFakeUpstream(dir, "fakeserver")
	})
	if fakeErr != nil {
		t.Fatalf("building the fake upstream: %v", fakeErr)
	}
	return fakeBin
}

func hasTool(names []string, name string) bool { return slices.Contains(names, name) }

// waitTools polls tools/list until cond holds (15 s at most).
func waitTools(t *testing.T, c *clawdtest.Client, what string, cond func([]string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		names := c.ToolNames()
		if cond(names) {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools/list never %s: %v", what, names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestToolDefinitionApproval drives the rug-pull guard through the daemon:
// a new server's tools are listed to no client until `clawd mcp approve`;
// their descriptions reach the client cleaned; approval survives a restart;
// a tool whose annotations change while connected disappears from
// tools/list at once (with tools/list_changed), its call is refused with
// -32004 definition_changed and the fix, `clawd mcp diff` shows the flipped
// destructiveHint, and after approving it is back; every step is audited.
func TestToolDefinitionApproval(t *testing.T) {
	fake := fakeUpstream(t)
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	b, _ := os.ReadFile(fake)
	sum := sha256.Sum256(b)
	e.MustRun("mcp", "add", "rp", "--stdio", "--", fake, "-rugpull", "annotations", "-evil-text")
	e.MustRun("mcp", "allow", "--server", "rp", "--sha256", hex.EncodeToString(sum[:]))

	d := e.Stdio("--client", "cc")
	c := d.Client
	c.Initialize("approval-test")
	waitServer(t, e, "rp", func(s map[string]any) bool { return s["last_status"] == "connected" })
	if names := c.ToolNames(); hasTool(names, "rp__echo") || hasTool(names, "rp__mutate") {
		t.Fatalf("unapproved tools listed: %v", names)
	}
	r := c.CallTool("rp__echo", map[string]any{"x": "1"})
	if code, msg, data := r.Err(); code != -32004 || data["reason"] != "definition_unapproved" ||
		!strings.Contains(msg, "clawd mcp approve rp rp__echo") {
		t.Fatalf("calling an unapproved tool: %s", r)
	}
	tools := mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "rp", "--json"))
	for _, tl := range tools {
		if tl["approval"] != "new" {
			t.Errorf("mcp tools: %v is %v, want new", tl["name"], tl["approval"])
		}
	}
	// With no terminal, approve without --sha256 or --yes approves nothing:
	// the definitions would be taken unseen.
	_, errOut, code := e.Run("mcp", "approve", "rp")
	if code != 2 || !strings.Contains(errOut, "8 tool definition(s) of rp would be approved unseen") ||
		!strings.Contains(errOut, "clawd mcp diff rp") || !strings.Contains(errOut, "--yes") {
		t.Errorf("approve with no terminal and no --yes: exit %d %q", code, errOut)
	}
	for _, tl := range mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "rp", "--json")) {
		if tl["approval"] != "new" {
			t.Errorf("approve with no terminal approved %v: %v", tl["name"], tl["approval"])
		}
	}
	out := e.MustRun("mcp", "approve", "rp", "--yes")
	if !strings.Contains(out, "approved rp__echo") || !strings.Contains(out, "approved rp__mutate") {
		t.Fatalf("mcp approve rp:\n%s", out)
	}
	waitTools(t, c, "listed rp__echo after approve", func(n []string) bool { return hasTool(n, "rp__echo") })
	list := c.Request("tools/list", nil).Raw
	if !strings.Contains(list, "Echoes its input. docs file_txt.exe") || strings.Contains(list, `\u001b`) ||
		strings.Contains(list, "\u202e") || strings.Contains(list, "ssh") {
		t.Errorf("tools/list does not carry the cleaned description: %s", list)
	}
	if r := c.CallTool("rp__echo", map[string]any{"x": "1"}); !r.ToolOK() {
		t.Fatalf("approved echo: %s", r)
	}

	// Approval survives a restart: a new daemon offers the tools at once.
	d.Stdin.Close()
	d.Wait(15 * time.Second)
	d = e.Stdio("--client", "cc")
	c = d.Client
	c.Initialize("approval-test-2")
	waitTools(t, c, "listed rp__echo after a restart", func(n []string) bool { return hasTool(n, "rp__echo") })

	// The rug pull: echo's destructiveHint flips while connected.
	if r := c.CallTool("rp__mutate", map[string]any{}); !r.ToolOK() {
		t.Fatalf("mutate: %s", r)
	}
	if !c.WaitNotification("notifications/tools/list_changed", 10*time.Second) {
		t.Error("no tools/list_changed after the definition changed")
	}
	waitTools(t, c, "hid the changed rp__echo", func(n []string) bool { return !hasTool(n, "rp__echo") && hasTool(n, "rp__mutate") })
	r = c.CallTool("rp__echo", map[string]any{"x": "1"})
	if code, msg, data := r.Err(); code != -32004 || data["reason"] != "definition_changed" ||
		!strings.Contains(msg, "clawd mcp diff rp") || !strings.Contains(msg, "clawd mcp approve rp rp__echo") {
		t.Fatalf("calling the changed tool: %s", r)
	}
	diff := e.MustRun("mcp", "diff", "rp")
	t.Logf("clawd mcp diff rp:\n%s", diff)
	t.Logf("clawd mcp tools rp:\n%s", e.MustRun("mcp", "tools", "rp"))
	for _, want := range []string{"rp__echo (upstream name echo): changed", "~ annotations/destructiveHint:", "was: false", "now: true"} {
		if !strings.Contains(diff, want) {
			t.Errorf("mcp diff lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "rp__mutate") {
		t.Errorf("mcp diff lists an unchanged tool:\n%s", diff)
	}
	if strings.ContainsAny(diff, "\x1b\u202e") {
		t.Errorf("mcp diff printed a raw escape or bidi override:\n%q", diff)
	}
	tools = mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "rp", "--json"))
	for _, tl := range tools {
		want := "approved"
		if tl["name"] == "rp__echo" {
			want = "changed"
		}
		if tl["approval"] != want {
			t.Errorf("mcp tools after the change: %v is %v, want %s", tl["name"], tl["approval"], want)
		}
	}
	// A stale reviewed hash is refused; the current one approves.
	_, errOut, code = e.Run("mcp", "approve", "rp", "rp__echo", "--sha256", strings.Repeat("0", 64))
	if code != 1 || !strings.Contains(errOut, "changed since you looked") {
		t.Errorf("approve with a stale hash: exit %d %q", code, errOut)
	}
	approveChangedEcho(t, e)
	waitTools(t, c, "listed rp__echo again", func(n []string) bool { return hasTool(n, "rp__echo") })
	if r := c.CallTool("rp__echo", map[string]any{"x": "2"}); !r.ToolOK() {
		t.Fatalf("re-approved echo: %s", r)
	}

	// The audit log has the detection, the refusals and the approvals.
	rows := mustJSON[[]map[string]any](t, e.MustRun("audit", "--json", "--limit", "0"))
	var changed, refused, approved int
	for _, row := range rows {
		reason, _ := row["reason"].(string)
		switch {
		case row["tool_id"] == "mcp:rp/echo" && strings.HasPrefix(reason, "definition_changed: sha256 "):
			changed++
		case row["tool_id"] == "rp__echo" && reason == "definition_changed" && row["result"] == "Deny":
			refused++
		case row["tool_id"] == "mcp:rp/echo" && strings.HasPrefix(reason, "approve: sha256 ") && row["entity_id"] == "local:cli":
			approved++
		}
	}
	if changed != 1 || refused != 1 || approved != 2 {
		t.Errorf("audit: %d definition_changed, %d refusals, %d approvals of echo; want 1, 1, 2", changed, refused, approved)
	}
	d.Stdin.Close()
	d.Wait(15 * time.Second)
}

// approveChangedEcho approves rp's changed echo. On a terminal approve
// first shows the change it would approve and asks: a no approves
// nothing, a yes approves it. Without script(1) it uses --yes.
func approveChangedEcho(t *testing.T, e *clawdtest.Env) {
	t.Helper()
	if !haveTerminal() {
		e.MustRun("mcp", "approve", "rp", "rp__echo", "--yes")
		return
	}
	echoState := func() any {
		for _, tl := range mustJSON[[]map[string]any](t, e.MustRun("mcp", "tools", "rp", "--json")) {
			if tl["name"] == "rp__echo" {
				return tl["approval"]
			}
		}
		return nil
	}
	out := onTerminal(t, e, "n", "mcp approve rp rp__echo")
	for _, want := range []string{"rp__echo (upstream name echo): changed", "~ annotations/destructiveHint:", "now: true",
		"Approve these 1 definition(s) of rp? [y/N]", "nothing was approved"} {
		if !strings.Contains(out, want) {
			t.Errorf("approve on a terminal, answered n: lacks %q:\n%s", want, out)
		}
	}
	if st := echoState(); st != "changed" {
		t.Errorf("answered n, echo is %v, want changed", st)
	}
	if out := onTerminal(t, e, "y", "mcp approve rp rp__echo"); !strings.Contains(out, "approved rp__echo (sha256 ") {
		t.Errorf("approve on a terminal, answered y:\n%s", out)
	}
	if st := echoState(); st != "approved" {
		t.Errorf("answered y, echo is %v, want approved", st)
	}
}
