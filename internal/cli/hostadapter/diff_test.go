package hostadapter

import (
	"os"
	"path/filepath"
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
