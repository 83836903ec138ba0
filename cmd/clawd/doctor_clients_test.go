package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/runstate"
)

// TestDecodeClientFileReadsWhatClientsRead: doctor reads client files the
// way the clients do: comments, trailing commas (OpenCode and VS Code
// accept both) and a leading byte order mark are no reason to call a file
// broken; a file that is not JSON still is one.
func TestDecodeClientFileReadsWhatClientsRead(t *testing.T) {
	for _, src := range []string{
		"{\n  // mine\n  \"mcp\": {\n    \"clawd\": {\"type\": \"local\"}, /* c */\n  },\n}\n",
		"\ufeff{\"mcpServers\": {\"clawd\": {\"command\": \"clawd\"}}}",
		"{\"url\": \"http://a//b\", \"x\": \"/* not a comment */\",}",
		"{\"servers\": {\"clawd\": {}}} // no newline after this comment",
	} {
		var v map[string]any
		if err := decodeClientFile([]byte(src), &v); err != nil {
			t.Errorf("%q: %v", src, err)
		} else if len(v) == 0 {
			t.Errorf("%q: decoded to nothing", src)
		}
	}
	// Nesting deep enough to exhaust the parser's stack (a repository's
	// file) is refused before parsing.
	deep := strings.Repeat("[", 5_000_000) + strings.Repeat("]", 5_000_000)
	for _, src := range []string{"{", "{\"a\":1}x", "[1,,2]", deep} {
		var v any
		if err := decodeClientFile([]byte(src), &v); err == nil {
			t.Errorf("%q accepted", src)
		}
	}
}

// A client entry's URL is shown as a configured upstream URL is
// (secrets.MaskURL): a key in its query is a secret even under a name the
// free-text masker does not know.
func TestDoctorShowsAClientURLMasked(t *testing.T) {
	const secret = "hunter2xyz"
	for _, u := range []string{"http://127.0.0.1:9/mcp?key=" + secret, "http://" + secret + "@127.0.0.1:9/mcp"} {
		c, _, ok := judgeEntry(clientFile{client: "claude", path: "/x/.claude.json"}, "clawd", &mcpEntry{URL: u}, &runstate.Workspace{}, nil)
		if !ok || strings.Contains(c.What, secret) || strings.Contains(fmt.Sprint(c.Info), secret) {
			t.Errorf("%s: %v %q %v", u, ok, c.What, c.Info)
		}
	}
}
