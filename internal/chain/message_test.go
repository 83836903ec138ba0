package chain

import (
	"context"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/tools"
)

// TestPolicyMessages: every policy refusal's message starts with
// "policy_denied: " and says which tool, what it needs, who asked with
// which level (and through which row), and the command that changes it,
// while data.reason stays the reason code.
func TestPolicyMessages(t *testing.T) {
	odd := &testTool{tools.Spec{Name: "odd", Permission: "telepathy"}}
	tests := []struct {
		name   string
		opts   Options
		rows   []TrustEntry
		entity string
		tool   *testTool
		reason string
		says   []string
	}{
		{"level too low through a wildcard row", Options{}, []TrustEntry{{Entity: "local:*", Level: 1}}, "local:ws-1a2b", specTools["bash"],
			ReasonLevelTooLow, []string{"bash needs level 2 (execute), local:ws-1a2b is level 1 through the row local:*",
				"`clawd trust set local:ws-1a2b 2` raises it", "`clawd trust set local:ws-1a2b 1 --allow bash` allows only this tool"}},
		{"level too low on an exact row", Options{}, []TrustEntry{{Entity: "device:p", Level: 2}}, "device:p", specTools["srv__fetch"],
			ReasonLevelTooLow, []string{"srv__fetch needs level 3 (upstream), device:p is level 2 (`clawd trust set device:p 3`"}},
		{"explicit deny", Options{}, []TrustEntry{{Entity: "cc:*", Level: 3, Perms: map[string]string{"write_file": PermDeny}}}, "cc:w", specTools["write_file"],
			ReasonExplicitDeny, []string{"write_file is denied to cc:w by the trust registry row cc:* (--deny write_file)",
				"`clawd trust set cc:w 3 --allow write_file`"}},
		{"explicit deny at level 0 suggests the level the tool needs", Options{}, []TrustEntry{{Entity: "local:*", Level: 0, Perms: map[string]string{"bash": PermDeny}}}, "local:w", specTools["bash"],
			ReasonExplicitDeny, []string{"`clawd trust set local:w 2 --allow bash`"}},
		{"switched off in config", Options{DisabledTools: map[string]bool{"bash": true}}, []TrustEntry{{Entity: "cc:*", Level: 3}}, "cc:w", specTools["bash"],
			ReasonToolDisabled, []string{"bash is switched off in clawd's config ([tools] bash = false)"}},
		{"unknown permission hint", Options{}, []TrustEntry{{Entity: "cc:*", Level: 3}}, "cc:w", odd,
			ReasonUnknownHint, []string{`odd has the permission hint "telepathy", which no trust level covers`, "`clawd trust set cc:w 3 --allow odd`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestChain(t, tt.opts, tt.rows...)
			cl := call(caller(tt.entity), "", `{}`)
			cl.ToolName, cl.Entry = tt.tool.spec.Name, tools.Entry{Provider: builtin, Tool: tt.tool}
			d := c.Authorize(context.Background(), cl)
			if d.Allowed() || d.Err.Code != CodePolicyDenied || !strings.HasPrefix(d.Err.Message, "policy_denied: ") {
				t.Fatalf("Err = %+v, want -32003 policy_denied: ...", d.Err)
			}
			for _, w := range tt.says {
				if !strings.Contains(d.Err.Message, w) {
					t.Errorf("message %q does not say %q", d.Err.Message, w)
				}
			}
			if data := d.Err.Data.(map[string]any); data["reason"] != tt.reason || len(data) != 1 {
				t.Errorf("data = %v, want only reason %s", data, tt.reason)
			}
		})
	}
}

// TestSandboxErrorMessage: the -32005 built outside the chain (os.Root
// refusing mid-call) reads like the chain's own, with the path quoted (it is
// the caller's text: a newline in it cannot start a new line of a log) and
// clipped.
func TestSandboxErrorMessage(t *testing.T) {
	e := SandboxError("link/x\nfake", "resolves outside the workspace root (symlink)")
	if want := `sandbox_violation: "link/x\nfake": resolves outside the workspace root (symlink); only paths inside the workspace can be used`; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	data := e.Data.(map[string]any)
	if data["path"] != "link/x\nfake" || data["reason"] != "resolves outside the workspace root (symlink)" {
		t.Errorf("data = %v", data)
	}
	long := SandboxError(strings.Repeat("a/", 1000), "r")
	if len(long.Message) > 400 || !strings.Contains(long.Message, `..."`) {
		t.Errorf("a 2000-byte path is not clipped in the message (%d bytes)", len(long.Message))
	}
}
