package hostadapter

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDryRunDiffHidesSecrets: the diff --dry-run prints shows the lines
// around clawd's entry, and in a one-line file the whole file; secrets the
// user keeps there (an API key in ~/.claude.json, a token in another
// server's env or headers) are masked, while clawd's own entry is shown as
// it will be written.
func TestDryRunDiffHidesSecrets(t *testing.T) {
	const apiKey = "sk-ant-api03-AbCdEfGh1234567890_AbCdEfGh1234567890-AbCd"
	const ghToken = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	const short = "hunter2hunter2"
	for _, tc := range []struct{ client, transport, file, shown string }{
		{"claude-code", TCPLoopback, "{\n  \"numStartups\": 3,\n  \"primaryApiKey\": \"" + apiKey + "\"\n}\n",
			`"headersHelper": "clawd token header --client cc --workspace `},
		{"cursor", UnixSocket, `{"mcpServers":{"gh":{"command":"gh-mcp","env":{"GITHUB_TOKEN":"` + ghToken + `"}},"h":{"url":"https://x","headers":{"Authorization":"Bearer ` + short + `"}}}}`,
			`"connect",`},
		{"opencode", TCPLoopback, "{\n  \"mcp\": {\n    \"gh\": {\"type\": \"local\", \"command\": [\"gh-mcp\", \"--token\", \"" + ghToken + "\"]}\n  }\n}\n",
			`"Authorization": "Bearer {file:`},
	} {
		a, _ := Lookup(tc.client)
		o := testOptions(t, User, tc.transport)
		e, err := a.Entry(o)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(e.File), 0o755)
		os.WriteFile(e.File, []byte(tc.file), 0o600)
		c, err := PlanInstall(a, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{Diff(c.File, c.Before, c.After), Diff(c.File, c.After, c.Before)} {
			for _, s := range []string{apiKey, ghToken, short} {
				if strings.Contains(d, s) {
					t.Errorf("%s: the diff shows a secret of the file:\n%s", tc.client, d)
				}
			}
		}
		if d := Diff(c.File, c.Before, c.After); !strings.Contains(d, tc.shown) {
			t.Errorf("%s: clawd's entry is not shown as written (want %s):\n%s", tc.client, tc.shown, d)
		}
	}
}

// TestDiffHeaderIsOneLine: a file name with a newline (a workspace
// directory an archive named) stays on the header line, quoted as git
// quotes such names, so it cannot add lines that read as the diff's own
// ("+  \"command\": ...").
func TestDiffHeaderIsOneLine(t *testing.T) {
	name := "/w/p\n+  \"command\": \"evil\"\n/.mcp.json"
	d := Diff(name, []byte("{}\n"), []byte("{\"a\": 1}\n"))
	lines := strings.Split(d, "\n")
	if len(lines) < 2 || lines[0] != "--- "+strconv.Quote(name) || lines[1] != "+++ "+strconv.Quote(name) {
		t.Fatalf("header not one quoted line each:\n%s", d)
	}
	for _, l := range lines {
		if strings.Contains(l, "evil") && !strings.HasPrefix(l, "--- ") && !strings.HasPrefix(l, "+++ ") {
			t.Fatalf("the name added a line to the diff:\n%s", d)
		}
	}
	if d := Diff("/w/plain dir/.mcp.json", nil, []byte("{}\n")); !strings.HasPrefix(d, "--- /dev/null\n+++ /w/plain dir/.mcp.json\n") {
		t.Fatalf("a plain name is not shown as is:\n%s", d)
	}
}
