package config

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var parseSeeds = []string{
	Template,
	"",
	"transport = \"tcp_loopback\"\nport = 8080\nbind_addr = \"::1\"\n",
	"[tools]\nbash = false\n\"read file\" = true\n",
	"[tools]\nbash = \"no\"",
	"trasport = \"stdio\"",
	"port = 1e3",
	"port = 0x7fffffffffffffff",
	"max_read_bytes = 9223372036854775808",
	"transport = ",
	"tools = { bash = false }\n[tools]\nx = true\n",
	"[[tools]]\n",
	"tools.bash.x = true",
	"a.b.c = 1\n[a]\n",
	"port = 1\nport = 2\n",
	"transport = \"\xff\"",
	"\xef\xbb\xbftransport = \"stdio\"",
	"transport = '''\nstdio'''",
	"socket_path = \"\\u0000\"",
	"[tools]\n[tools]\n",
	"policy_stub_mode = 2024-01-01T00:00:00Z",
}

func TestParseProperties(t *testing.T) {
	for _, s := range parseSeeds {
		checkParse(t, []byte(s))
	}
}

// Whatever the file, Parse does not panic; what it accepts is valid, and
// what it refuses it says why in a message that points at the problem: a
// line and column, an unknown key, or the key and value Validate refused.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkParse)
}

// pointed are the forms of Parse's messages that name where the problem is.
var pointed = regexp.MustCompile(`^(line \d+, column \d+: .+|unknown key .+ \(see|bind_0000_rejected|[a-z_]+ = .+: must be )`)

func checkParse(t *testing.T, data []byte) {
	t.Helper()
	c, err := Parse(data)
	if err != nil {
		msg := err.Error()
		if !pointed.MatchString(msg) {
			t.Fatalf("Parse(%q): %q does not say where the problem is", data, msg)
		}
		if utf8.Valid(data) && !utf8.ValidString(msg) {
			t.Fatalf("Parse(%q): message %q is not valid UTF-8", data, msg)
		}
		if strings.ContainsAny(msg, "\n\r") && !strings.HasPrefix(msg, "line ") {
			t.Fatalf("Parse(%q): message %q spans lines", data, msg)
		}
		return
	}
	if c == nil {
		t.Fatalf("Parse(%q): no config and no error", data)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Parse(%q) accepted an invalid config: %v", data, err)
	}
}
