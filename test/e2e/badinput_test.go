package e2e

import (
	"strings"
	"testing"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestBadInputChangesNothing: a value that is wrong in a way the parser
// alone does not see (a day count that overflows, a tool list with a
// newline, a label with control characters, a 120 KB name) is a usage
// error, exit 2, that names the problem in at most a few KB of stderr,
// prints nothing on stdout, and leaves the trust registry, the audit log
// and the credentials exactly as they were.
func TestBadInputChangesNothing(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.Init()
	e.MustRun("trust", "set", "local:keep", "2", "--deny", "bash")
	e.MustRun("egress", "allow", "https://one.example")
	e.MustRun("egress", "allow", "https://two.example")
	state := func() string {
		return e.MustRun("trust", "list", "--json") + e.MustRun("audit", "--json", "--limit", "0") + e.MustRun("token", "list", "--all", "--json")
	}
	before := state()
	huge := strings.Repeat("a", 120000)
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"prune by a day count that wraps past now", []string{"audit", "prune", "--older-than", "9223372036854775807d"}, "too far back"},
		{"prune by a day count beyond the bound", []string{"audit", "prune", "--older-than", "213503982334601d", "--json"}, "too far back"},
		{"deny list cut at a newline", []string{"trust", "set", "local:keep", "2", "--deny", "bash\nwrite_file"}, "tool name"},
		{"allow list with a quote", []string{"trust", "set", "local:keep", "2", "--allow", `read_file"`}, "tool name"},
		{"label with control characters", []string{"token", "issue", "--client", "cc", "--label", "a\x1b[2J"}, "--label"},
		{"label too long", []string{"token", "issue", "--client", "cc", "--no-save", "--label", strings.Repeat("x", 200)}, "--label"},
		{"huge entity", []string{"trust", "set", "local:" + huge, "2"}, "bytes cut"},
		{"huge origin", []string{"egress", "allow", "https://" + huge + ".example"}, "bytes cut"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := e.Run(tc.args...)
			if code != 2 || out != "" || !strings.Contains(stderr, tc.stderr) || len(stderr) > 4096 {
				t.Errorf("exit %d, stdout %q, stderr (%d bytes) %.300q; want 2, nothing, %q", code, out, len(stderr), stderr, tc.stderr)
			}
			if strings.Contains(stderr, "goroutine ") {
				t.Errorf("stack trace: %s", stderr)
			}
		})
	}
	if after := state(); after != before {
		t.Errorf("state changed:\nbefore %s\nafter  %s", before, after)
	}
}
