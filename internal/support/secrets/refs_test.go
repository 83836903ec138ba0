package secrets

import (
	"strings"
	"testing"
)

func TestRefsAndExpand(t *testing.T) {
	env := map[string]string{"A": "1", "B_2": "two", "CLAWD_TOKEN": "secret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for in, want := range map[string]string{
		"plain":         "plain",
		"${A}":          "1",
		"$A-$B_2":       "1-two",
		"x${A}y${B_2}z": "x1ytwoz",
		"cost $5 and $": "cost $5 and $",
		"Bearer ${B_2}": "Bearer two",
		"{A}":           "{A}",
		// "$$" is a literal '$': any value can be written.
		"$$A":        "$A",
		"pa$$word":   "pa$word",
		"$$${A}":     "$1",
		"$$$A":       "$1",
		"a$$":        "a$",
		"$$$$":       "$$",
		"$$$5":       "$$5",
		"$5$$x$":     "$5$x$",
		"$${A-B}":    "${A-B}",
		"$$CLAWD_X":  "$CLAWD_X",
		"x$$y${A}$$": "x$y1$",
	} {
		got, err := ExpandRefs(in, lookup)
		if err != nil || got != want {
			t.Errorf("ExpandRefs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"${MISSING}":     "MISSING} is not set",
		"$CLAWD_TOKEN":   "clawd's own",
		"${CLAWD_TOKEN}": "clawd's own",
		"${A":            "unterminated",
		"${A-B}":         "not a variable name",
	} {
		got, err := ExpandRefs(in, lookup)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("ExpandRefs(%q) = %q, %v; want an error with %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"${GITHUB_TOKEN}":              "${GITHUB_TOKEN}",
		"$TOKEN":                       "$TOKEN",
		"Bearer ${API_TOKEN}":          "Bearer ${API_TOKEN}",
		"${USER}:${PASS}":              "${USER}:${PASS}",
		"sk-proj-abcdefghijklmnopwxyz": "sk-****wxyz",
		"hunter2":                      "****",
		"application/json":             "****",
		"key-${SUFFIX}":                "****${SUFFIX}",
		"Bearer sk-${X}":               "****${X}",
		"${UNTERMINATED":               "****",
		"$$:${A}:$$":                   "****${A}****",
		"${USER}:$$":                   "${USER}****",
		"pa$$word-${X}":                "****${X}",
		"":                             "",
	} {
		if got := MaskRefValue(in); got != want {
			t.Errorf("MaskRefValue(%q) = %q, want %q", in, got, want)
		}
	}
	if r := Refs("Bearer ${TOKEN} $USER"); strings.Join(r, ",") != "TOKEN,USER" {
		t.Errorf("Refs = %v", r)
	}
	if r := Refs("pa$$word $$${TOKEN}"); strings.Join(r, ",") != "TOKEN" {
		t.Errorf("Refs(pa$$word $$${TOKEN}) = %v, want TOKEN", r)
	}
	if err := CheckRefs("$${A-B} $$CLAWD_TOKEN"); err != nil {
		t.Errorf("CheckRefs of escaped dollars: %v", err)
	}
}

// MaskURL is the one way a configured URL is shown: query values as
// configured secrets, userinfo and fragments hidden whether or not the
// URL parses, the rest through MaskText.
func TestMaskURL(t *testing.T) {
	const q = "supersecretquery0123"
	for _, tt := range []struct{ in, want, secret string }{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", ""},
		{"https://h/mcp?key=" + q, "https://h/mcp?key=sup****0123", q},
		{"https://h/mcp?key=hunter2xyz&a=${TOKEN}", "https://h/mcp?a=${TOKEN}&key=****", "hunter2xyz"},
		{"https://h/mcp?b=" + q + "&a=1&b=2", "https://h/mcp?a=****&b=sup****0123&b=****", q},
		{"https://u:hunter2xyz@h/mcp", "https://***@h/mcp", "hunter2xyz"},
		// A token given as the user, a password with a '/', a URL that
		// does not parse: userinfo is hidden all the same.
		{"https://ghp_short1@github.com/mcp", "https://***@github.com/mcp", "ghp_short1"},
		{"https://u:hunter/2xyz@h/mcp", "https://***@h/mcp", "hunter/2xyz"},
		{"http://u:hunter2xyz@h:99999/", "http://***@h:99999/", "hunter2xyz"},
		// An '@' in the path (a registry's @owner/server) is the path's:
		// with no ':' before the path there is no password to hide, and
		// the host stays shown.
		{"https://server.smithery.ai/@owner/srv/mcp", "https://server.smithery.ai/@owner/srv/mcp", ""},
		{"https://h/@scope/pkg/mcp?key=hunter2xyz", "https://h/@scope/pkg/mcp?key=****", "hunter2xyz"},
		// A query piece without a name, a query that does not parse, a
		// URL that does not parse, a fragment.
		{"https://h/mcp?hunter2xyz", "https://h/mcp?****", "hunter2xyz"},
		{"https://h/mcp?a=1&hunter2xyz", "https://h/mcp?****&a=****", "hunter2xyz"},
		{"https://h/mcp?key=hunter2xyz;x=1", "https://h/mcp?****", "hunter2xyz"},
		// A name that is not a plain name is no name (?://u:pw@h=).
		{"https://h/mcp?u:hunter2xyz@h=1&b-c_d.e[]=2", "https://h/mcp?****&b-c_d.e%5B%5D=****", "hunter2xyz"},
		{"?://bob:hunter2xyz@0=", "?****", "hunter2xyz"},
		{"http://[::1/mcp?key=hunter2xyz", "http://[::1/mcp?key=****", "hunter2xyz"},
		{"https://h/mcp?key=" + q + "#frag", "https://h/mcp?key=sup****0123#****", q},
		{"https://h/mcp#access=hunter2xyz", "https://h/mcp#****", "hunter2xyz"},
		// A token-like path segment (a webhook's) is MaskText's.
		{"https://hooks.example.com/services/T0A1B2C3D4/Xk9fQ2mZ7vB1nR8tY3wL6pJ0hD5cGabc", "https://hooks.example.com/services/***", "Xk9fQ2mZ7vB1nR8tY3wL6pJ0hD5cGabc"},
		// A password holding '#', '?' or '/' that would start the
		// fragment, the query or the path: userinfo runs to the last '@'
		// all the same when a ':' comes before them.
		{"https://u:pa#ss@h/mcp", "https://***@h/mcp", "pa#ss"},
		{"https://u:pa?ss@h/mcp?key=1", "https://***@h/mcp?key=****", "pa?ss"},
		{"https://u:pa/ss#x@h/mcp", "https://***@h/mcp", "pa/ss#x"},
		{"https://u:12#ab@h", "https://***@h", "12#ab"},
		// A password that reads as a port and a path.
		{"https://u:12/ss@h/mcp", "https://***@h/mcp", "12/ss"},
		{"https://u:pa%40ss@h/mcp", "https://***@h/mcp", "pa%40ss"},
		{"http://u:hunter2xyz@[::1]:8080/mcp", "http://***@[::1]:8080/mcp", "hunter2xyz"},
		{"git+ssh://u:hunter2xyz@h/repo", "git+ssh://***@h/repo", "hunter2xyz"},
		{"redis://:hunter2xyz@cache:6379", "redis://***@cache:6379", "hunter2xyz"},
		{"//u:hunter2xyz@h/mcp", "//***@h/mcp", "hunter2xyz"},
		{"u:hunter2xyz@host:repo", "***@host:repo", "hunter2xyz"},
		// An '@' that starts a path segment after a host and its port is
		// the path's, as is one in the query or fragment after a path:
		// the host stays shown.
		{"https://h:8443/@owner/mcp", "https://h:8443/@owner/mcp", ""},
		{"https://h:8443/@owner/x@y/mcp", "https://h:8443/@owner/x@y/mcp", ""},
		{"http://[::1]:8080/@owner/mcp", "http://[::1]:8080/@owner/mcp", ""},
		{"http://[::1]/@owner/mcp", "http://[::1]/@owner/mcp", ""},
		{"https://h:8443/mcp?to=a@b", "https://h:8443/mcp?to=****", ""},
		{"https://tok@h:8443/@owner/mcp", "https://***@h:8443/@owner/mcp", "tok"},
		{"https://h/go/https://hunter2xyz@h2/x", "https://h/go/https://***@h2/x", "hunter2xyz"},
		{":///://hunter2Zq9@00", ":///://***@00", "hunter2Zq9"},
		{"", "", ""},
	} {
		got := MaskURL(tt.in)
		if got != tt.want || tt.secret != "" && strings.Contains(got, tt.secret) {
			t.Errorf("MaskURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// MaskTextWithURL finds the configured URL also as Go quotes it back in
// a request's error, escaped.
func TestMaskTextWithURLFindsTheEscapedURL(t *testing.T) {
	raw := "https://h/pä/mcp?key=hunter2xyz"
	text := `Post "https://h/p%C3%A4/mcp?key=hunter2xyz": connection refused`
	if got := MaskTextWithURL(text, raw); strings.Contains(got, "hunter2xyz") {
		t.Errorf("MaskTextWithURL(%q) = %q", text, got)
	}
}
