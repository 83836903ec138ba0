package hostadapter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A client that rewrites its config between install's read and its write
// (Claude Code saves ~/.claude.json often) must not lose that edit: Apply
// refuses a file that is no longer what the plan was made from, and the
// client's bytes stay.
func TestApplyRefusesFileEditedSincePlan(t *testing.T) {
	a, _ := Lookup("claude-code")
	for _, pre := range []bool{true, false} {
		o := testOptions(t, User, Stdio)
		e, err := a.Entry(o)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(e.File), 0o755)
		if pre {
			if err := os.WriteFile(e.File, []byte(existing["claude-code"]), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		c, err := PlanInstall(a, o)
		if err != nil {
			t.Fatal(err)
		}
		edited := []byte("{\"numStartups\": 7, \"mcpServers\": {}}\n")
		if err := os.WriteFile(e.File, edited, 0o600); err != nil {
			t.Fatal(err)
		}
		err = Apply(c)
		if err == nil || !strings.Contains(err.Error(), "changed since") {
			t.Fatalf("pre=%v: Apply over a file edited since the plan: %v, want a refusal", pre, err)
		}
		if got, _ := os.ReadFile(e.File); string(got) != string(edited) {
			t.Fatalf("pre=%v: the client's edit was overwritten:\n%s", pre, got)
		}
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), "changed since") {
			t.Fatalf("pre=%v: Check passes a file edited since the plan: %v", pre, err)
		}
	}
}
