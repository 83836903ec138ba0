package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// Approval from the command line, without a terminal: `mcp add` shows the
// exact command and what it pins, stores the server unapproved and prints
// the allow line; that line approves it (audited); a changed script is
// then shown as not approved; `--allow` approves at once, and refuses to
// store a command that cannot be approved.
func TestMCPApproveFromCLI(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	e := clawdtest.NewEnv(t, clawdBin)
	script := filepath.Join(e.WS, "srv dir", "srv.js")
	os.MkdirAll(filepath.Dir(script), 0o755)
	if err := os.WriteFile(script, []byte("console.log('v1')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := e.Run("mcp", "add", "js", "--stdio", "--", "node", script, "--tab\there")
	if code != 0 {
		t.Fatalf("add: exit %d %s", code, errs)
	}
	if !strings.Contains(out, "Server js runs:\n  node '"+script+"' $'--tab\\x09here'\n") {
		t.Errorf("add does not show the exact command quoted:\n%s", out)
	}
	m := regexp.MustCompile(`To approve exactly this: (clawd mcp allow --server js --sha256 [0-9a-f]{64} --script-sha256 ([0-9a-f]{64}))\n`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "script '"+script+"' sha256 "+m[2]) {
		t.Fatalf("add without a terminal prints no allow line naming the script:\n%s", out)
	}
	show := mustJSON[map[string]any](t, e.MustRun("mcp", "show", "js", "--json"))
	ap := show["approval"].(map[string]any)
	if ap["current"] != false || !strings.Contains(ap["problem"].(string), "supply_chain_unverified") {
		t.Errorf("unapproved server's approval: %v", ap)
	}
	// A stored server with no terminal and no --yes: usage error.
	if _, errs, code := e.Run("mcp", "allow", "js"); code != 2 || !strings.Contains(errs, "--yes") {
		t.Errorf("allow NAME without a terminal: exit %d %q", code, errs)
	}
	// The printed line approves exactly that.
	line := strings.Fields(m[1])[1:]
	e.MustRun(line...)
	ap = mustJSON[map[string]any](t, e.MustRun("mcp", "show", "js", "--json"))["approval"].(map[string]any)
	pins := ap["pins"].([]any)
	if ap["current"] != true || len(pins) != 1 || pins[0].(map[string]any)["detail"] != script {
		t.Errorf("approved server's approval: %v", ap)
	}
	// Two rows: the add (configure), then the approval.
	audit := mustJSON[[]map[string]any](t, e.MustRun("audit", "--tool", "mcp:js", "--json"))
	if len(audit) != 2 || audit[1]["entity_id"] != "local:cli" || audit[1]["result"] != "Allow" || audit[1]["step"] != "upstream" ||
		!strings.HasPrefix(audit[0]["reason"].(string), "configure: added ") ||
		!strings.HasPrefix(audit[1]["reason"].(string), "approve: sha256 ") {
		t.Errorf("approval audit rows: %v", audit)
	}
	// The script changes: show says so, naming the script.
	os.WriteFile(script, []byte("console.log('v2')\n"), 0o644)
	text := e.MustRun("mcp", "show", "js")
	if !strings.Contains(text, "what the command runs now: NOT approved") || !strings.Contains(text, "script '"+script+"'") {
		t.Errorf("show after the script changed:\n%s", text)
	}

	// --allow: approved at once.
	out = e.MustRun("mcp", "add", "now", "--allow", "--stdio", "--", "node", script)
	if !strings.Contains(out, "Approved now.") {
		t.Errorf("add --allow:\n%s", out)
	}
	if ap := mustJSON[map[string]any](t, e.MustRun("mcp", "show", "now", "--json"))["approval"].(map[string]any); ap["current"] != true {
		t.Errorf("add --allow left it unapproved: %v", ap)
	}
	// Removed and added again, it keeps its approval, and add says so
	// instead of printing an allow line.
	e.MustRun("mcp", "rm", "now")
	if out := e.MustRun("mcp", "add", "now", "--stdio", "--", "node", script); !strings.Contains(out, "Already approved") || strings.Contains(out, "Not approved") {
		t.Errorf("add again of an approved server:\n%s", out)
	}
	// --allow with a command that cannot be approved: nothing stored.
	_, errs, code = e.Run("mcp", "add", "floating", "--allow", "--stdio", "--", "npx", "-y", "some-mcp-server")
	if code != 2 || !strings.Contains(errs, "floating spec") || !strings.Contains(errs, "npx -y some-mcp-server@") {
		t.Errorf("add --allow of a floating npx spec: exit %d %q", code, errs)
	}
	if slices.Contains(listNames(t, e), "floating") {
		t.Error("a command that cannot be approved was stored with --allow")
	}
}

// On a terminal `mcp add` asks, and only a yes approves. script(1) gives
// the command a pseudo-terminal; the answer is typed into it.
func TestMCPApprovePromptOnTerminal(t *testing.T) {
	needTerminal(t)
	e := clawdtest.NewEnv(t, clawdBin)
	add := func(name, answer string) string {
		t.Helper()
		return onTerminal(t, e, answer, "mcp add "+name+" --stdio -- true")
	}
	if out := add("yes", "y"); !strings.Contains(out, "Approve yes? [y/N]") || !strings.Contains(out, "Approved yes.") {
		t.Errorf("answered y:\n%s", out)
	}
	if out := add("no", "n"); !strings.Contains(out, "Not approved. To approve later: clawd mcp allow --server no --sha256 ") {
		t.Errorf("answered n:\n%s", out)
	}
	// The question is asked on the terminal also when stdout goes to a
	// file: what is approved and the question are on stderr.
	stdout := filepath.Join(t.TempDir(), "stdout")
	if out := onTerminal(t, e, "y", "mcp add redirected --stdio -- true > "+stdout); !strings.Contains(out, "Approve redirected? [y/N]") || !strings.Contains(out, "Server redirected runs:") ||
		!strings.Contains(out, "Approved redirected.") {
		t.Errorf("stdout redirected, answered y:\n%s", out)
	}
	if b, _ := os.ReadFile(stdout); !strings.Contains(string(b), "added MCP server redirected") || strings.Contains(string(b), "[y/N]") {
		t.Errorf("stdout redirected: the file has %q", b)
	}
	// A no to mcp allow NAME is exit 1, with --json as without.
	for _, json := range []string{"", " --json"} {
		if out := onTerminal(t, e, "n", "mcp allow no"+json+"; echo exit=$?"); !strings.Contains(out, "Approve no? [y/N]") ||
			!strings.Contains(out, "no was not approved") || !strings.Contains(out, "exit=1") {
			t.Errorf("mcp allow no%s, answered n:\n%s", json, out)
		}
	}
	for name, want := range map[string]bool{"yes": true, "no": false, "redirected": true} {
		ap := mustJSON[map[string]any](t, e.MustRun("mcp", "show", name, "--json"))["approval"].(map[string]any)
		if ap["current"] != want {
			t.Errorf("%s: approved %v, want %v", name, ap["current"], want)
		}
	}
}

// needTerminal skips a test that needs util-linux script(1) to give the
// command a pseudo-terminal.
func needTerminal(t *testing.T) {
	t.Helper()
	if !haveTerminal() {
		t.Skip("needs util-linux script(1) for a pseudo-terminal")
	}
}

func haveTerminal() bool {
	_, err := exec.LookPath("script")
	return err == nil && runtime.GOOS == "linux"
}

// onTerminal runs clawd with args (one shell word string, quoted as
// needed) on a pseudo-terminal, types answer once a [y/N] question is
// there, and returns everything the terminal showed.
func onTerminal(t *testing.T, e *clawdtest.Env, answer, args string) string {
	t.Helper()
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(scriptBin, "-qec", clawdBin+" "+args, "/dev/null")
	cmd.Env, cmd.Dir = e.Environ(), e.WS
	in, _ := cmd.StdinPipe()
	out := &lockedBuf{}
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Answer once the question is there.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "[y/N]") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	in.Write([]byte(answer + "\n"))
	in.Close()
	cmd.Wait()
	return out.String()
}

// lockedBuf is a buffer a child's output goroutine writes while the test
// reads it.
type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
