package hostadapter

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

const entry = `{"command":"clawd","args":["serve"]}`

// Samples a user may have: comments, trailing commas, tabs, one-line
// objects, odd spacing, CRLF-free but otherwise untidy.
var samples = map[string]string{
	"empty object":   "{}\n",
	"no newline":     `{"mcpServers":{}}`,
	"other servers":  "{\n  \"mcpServers\": {\n    \"git\": {\n      \"command\": \"git-mcp\"\n    }\n  },\n  \"theme\": \"dark\"\n}\n",
	"jsonc":          "// my servers\n{\n\t\"servers\": {\n\t\t\"other\": {\"command\": \"x\"}, // keep me\n\t\t/* block */\n\t},\n\t\"inputs\": [],\n}\n",
	"one line":       `{ "mcpServers" : { "a":{"command":"a"} , "b" : {"command":"b"} } , "x":1 }`,
	"no server map":  "{\n    \"$schema\": \"https://opencode.ai/config.json\",\n    \"model\": \"m\"\n}\n",
	"existing clawd": "{\n  \"mcpServers\": {\n    \"clawd\": {\"command\": \"old\"},\n    \"z\": {}\n  }\n}\n",
}

func TestSetGetRemoveKeepTheRest(t *testing.T) {
	for name, src := range samples {
		for _, path := range [][]string{{"mcpServers"}, {"servers"}, {"mcp"}, {"a", "b"}} {
			t.Run(name+"/"+strings.Join(path, "."), func(t *testing.T) {
				out, err := SetMember([]byte(src), path, "clawd", []byte(entry))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := hujson.Parse(out); err != nil {
					t.Fatalf("result does not parse: %v\n%s", err, out)
				}
				got, ok, err := GetMember(out, path, "clawd")
				if err != nil || !ok || string(got) != entry {
					t.Fatalf("GetMember = %s %v %v\n%s", got, ok, err, out)
				}
				// Strict JSON input stays strict JSON.
				if json.Valid([]byte(src)) && !json.Valid(out) {
					t.Fatalf("strict JSON became invalid:\n%s", out)
				}
				// Every comment survives.
				for _, c := range []string{"// my servers", "// keep me", "/* block */"} {
					if strings.Contains(src, c) && !strings.Contains(string(out), c) {
						t.Fatalf("lost %q:\n%s", c, out)
					}
				}
				// Setting the same value again changes nothing.
				again, err := SetMember(out, path, "clawd", []byte(entry))
				if err != nil || string(again) != string(out) {
					t.Fatalf("second set changed the file:\n%s\n---\n%s", out, again)
				}
				removed, ok, err := RemoveMember(out, path, "clawd")
				if err != nil || !ok {
					t.Fatal(ok, err)
				}
				if _, err := hujson.Parse(removed); err != nil {
					t.Fatalf("after remove does not parse: %v\n%s", err, removed)
				}
				if name != "existing clawd" {
					if _, ok, _ := GetMember(removed, path, "clawd"); ok {
						t.Fatalf("entry still there:\n%s", removed)
					}
				}
				if name == "other servers" && path[0] == "mcpServers" && string(removed) != src {
					t.Fatalf("remove after add did not give the original back:\n%q\n%q", src, removed)
				}
			})
		}
	}
}

func TestSetMemberFormatting(t *testing.T) {
	out, err := SetMember([]byte(samples["other servers"]), []string{"mcpServers"}, "clawd", []byte(entry))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {\n    \"git\": {\n      \"command\": \"git-mcp\"\n    },\n    \"clawd\": {\n      \"command\": \"clawd\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  },\n  \"theme\": \"dark\"\n}\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	out, _ = SetMember([]byte(samples["jsonc"]), []string{"servers"}, "clawd", []byte(`{"a":1}`))
	if !strings.Contains(string(out), "\n\t\t\"clawd\": {\n\t\t\t\"a\": 1\n\t\t}") {
		t.Fatalf("tab indentation not followed:\n%s", out)
	}
	out, _ = SetMember(nil, []string{"mcp"}, "clawd", []byte(`{"a":1}`))
	if string(out) != "{\n  \"mcp\": {\n    \"clawd\": {\n      \"a\": 1\n    }\n  }\n}\n" {
		t.Fatalf("new document:\n%s", out)
	}
}

func TestBadInputIsAnError(t *testing.T) {
	for _, src := range []string{`{"mcpServers": [1]}`, `[1,2]`, `{"mcpServers": {`, `not json`} {
		if _, err := SetMember([]byte(src), []string{"mcpServers"}, "clawd", []byte(entry)); err == nil {
			t.Errorf("%q: no error", src)
		}
	}
	// The message names what was found, with the right article.
	for _, tc := range []struct{ src, want string }{
		{`{"mcpServers": [1]}`, `"mcpServers" is an array, not an object`},
		{`{"mcpServers": "x"}`, `"mcpServers" is a string, not an object`},
		{`{"mcpServers": 1}`, `"mcpServers" is a number, not an object`},
		{`{"mcpServers": null}`, `"mcpServers" is null, not an object`},
		{`{"mcpServers": true}`, `"mcpServers" is a boolean, not an object`},
		{`[1,2]`, `the top level is an array, not an object`},
	} {
		_, err := SetMember([]byte(tc.src), []string{"mcpServers"}, "clawd", []byte(entry))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
}
