package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// `clawd mcp test NAME` starts the server itself, as a daemon would, and
// the server is a process of the same user: it can read the command's
// /proc/<pid>/environ. The CLAWD_*/CLAWDE_* variables the command was
// given are not there (nor in the server's own environment), as for
// `clawd serve`.
func TestMCPTestHidesClawdVarsFromTheServer(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	out := filepath.Join(e.Base, "parent-environ")
	script := filepath.Join(e.Base, "peek.sh")
	body := "#!/bin/sh\ntr '\\0' '\\n' < /proc/$PPID/environ > " + out + ".tmp\nenv >> " + out + ".tmp\nmv " + out + ".tmp " + out + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	e.MustRun("mcp", "add", "peek", "--stdio", "--disabled", "--", script)
	e.MustRun("mcp", "allow", "--server", "peek", "--sha256", hex.EncodeToString(sum[:]))
	secret := "mcptest-secret-" + strings.Repeat("q", 32)
	e.Extra = append(e.Extra, "CLAWD_TOKEN="+secret, "CLAWDE_SESSION_SECRET="+secret)
	e.Run("mcp", "test", "peek") // the script speaks no MCP: the test fails, after it ran
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if got, err = os.ReadFile(out); err == nil {
			break
		}
	}
	if !strings.Contains(string(got), "PATH=") {
		t.Fatalf("the server did not run or could not read its parent's environment: %q", got)
	}
	for _, s := range []string{secret, "CLAWD_TOKEN", "CLAWDE_SESSION_SECRET"} {
		if strings.Contains(string(got), s) {
			t.Errorf("the server started by mcp test finds %q in its parent's or its own environment:\n%s", s, got)
		}
	}
}
