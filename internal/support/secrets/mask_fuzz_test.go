package secrets

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// plantedSecret is what FuzzMaskTextPlanted plants; plantings are the
// contexts MaskText's doc says it masks, with the secret at %s. The
// planted key is a random-looking word (looksRandom), masked on its own.
const plantedSecret = "hunter2Zq9"

const plantedKey = "sk-proj-4fK9xQ2mZ7vB1nR8tY3wL6pJ0hD5cG"

var plantings = []string{
	"password=%s",
	"--password %s",
	`"api_key": "%s"`,
	"'client_secret': '%s'",
	"DB_PASSWD: %s",
	"SMTP_PASS=%s",
	"OPENAI_KEY=%s",
	"Authorization: Bearer %s",
	"authorization: Basic %s",
	"Authorization: SSWS %s",
	"Proxy-Authorization: Digest %s",
	"Cookie: session=%s",
	"X-Api-Key: %s",
	"token %s",
	"pass:%s",
	"https://bob:%s@example.com/x",
	"redis://:%s@cache:6379",
	"curl -u bob:%s https://x",
	"mysql -h db -u root -p%s app",
	"docker login -u bob -p %s registry",
	"sshpass -p %s ssh host",
	"redis-cli -a %s ping",
	"curl -b sid=%s https://x",
	"sqlcmd -S db -U sa -P %s",
	"https://a.blob.core.windows.net/c?sv=2022-11-02&sig=%s",
	"MNEMONIC=%s",
	"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n%s",
	"https://bob:p@%s@example.com/x",
	"%K",
}

// gluable are the plantings still masked after a letter.
var gluable = map[string]bool{
	"password=%s": true, "--password %s": true, `"api_key": "%s"`: true, "'client_secret': '%s'": true,
	"DB_PASSWD: %s": true, "token %s": true, "https://bob:%s@example.com/x": true, "redis://:%s@cache:6379": true,
}

var maskSeeds = []string{
	"",
	"go test ./... -run TestX -count=1",
	"command: curl -H 'Authorization: Bearer abcdef123456' https://api.example.com/v1/items",
	"mysql -h db.example.com -u root -pS3cretPass app -e 'select 1'",
	`{"password": "x", "token": 'y', "api_key":z}`,
	"--password-stdin -u bob --no-auth --password x",
	"sha256 " + strings.Repeat("ab", 32),
	"com/owner/repo/commit/" + plantedKey,
	"é password=ü token ℵ",
	"\xff password=\xfe",
	"***",
	"password=***",
	"https://u:p@h redis://:q@c -u a:b --user=c:d",
	"-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEE\\n-----END EC PRIVATE KEY-----",
	"echo glpat-x2Fq9ZbK7vR3mN8pW1tY AKIAIOSFODNN7EXAMPLE SG.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tA",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhb vault login -x s.Zx7nQ4 ?sig=a%2Bb",
}

// checkMaskText: MaskText does not panic, keeps valid UTF-8 valid, is
// fast, and a second pass finds nothing the first one left (whatever it
// masks once stays masked, and nothing else changes).
func checkMaskText(t *testing.T, in string) {
	t.Helper()
	start := time.Now()
	out := MaskText(in)
	if d := time.Since(start); len(in) <= 64<<10 && d > 100*time.Millisecond {
		// A stall of the machine (another fuzz worker, a loaded CI
		// runner) passes; slow code is slow again.
		start = time.Now()
		MaskText(in)
		if again := time.Since(start); again > 100*time.Millisecond {
			t.Errorf("MaskText of %d bytes took %v, and %v again", len(in), d, again)
		}
	}
	if utf8.ValidString(in) && !utf8.ValidString(out) {
		t.Errorf("MaskText(%q) = %q: not valid UTF-8", in, out)
	}
	if again := MaskText(out); !masks(out, again) {
		t.Errorf("a second MaskText does more than mask:\n in:    %q\n once:  %q\n twice: %q", in, out, again)
	}
}

// masks reports whether masked is text with some spans replaced by "***"
// and nothing else changed: whatever the spans, what was hidden stays
// hidden. (MaskText is not quite idempotent: a second pass reads the
// "***" of a quoted value as an unquoted one, with the punctuation that
// follows it: `"password": ***, "a": 1` loses its comma.)
func masks(text, masked string) bool {
	pieces := strings.Split(masked, "***")
	if !strings.HasPrefix(text, pieces[0]) {
		return false
	}
	rest := text[len(pieces[0]):]
	for i, p := range pieces[1:] {
		if i == len(pieces)-2 {
			return strings.HasSuffix(rest, p) && len(rest) > len(p)
		}
		j := strings.Index(rest[1:], p)
		if j < 0 {
			return false
		}
		rest = rest[1+j+len(p):]
	}
	return rest == ""
}

// checkPlanted: a secret planted in one of plantings, between any prefix
// and suffix, does not come out. The secret must appear in the input only
// where planted. The key stands on its own as a word: a key glued to
// other letters is another word, whose randomness is another matter.
func checkPlanted(t *testing.T, prefix string, which uint8, suffix string) {
	t.Helper()
	p := plantings[int(which)%len(plantings)]
	secret := plantedSecret
	if p == "%K" {
		secret = plantedKey
		if prefix != "" && isWordByte(prefix[len(prefix)-1]) || suffix != "" && isWordByte(suffix[0]) {
			return
		}
		p = "%s"
	}
	// Header names, tool names and NAME_KEY= are words: glued to a letter
	// before them (xCookie, 0docker) they are other words. Secret-looking
	// names and URLs are found inside other words.
	if !gluable[p] && prefix != "" && isWordByte(prefix[len(prefix)-1]) && prefix[len(prefix)-1] != '-' {
		return
	}
	in := prefix + strings.Replace(p, "%s", secret, 1) + suffix
	if strings.Count(in, secret) != 1 {
		return
	}
	if out := MaskText(in); strings.Contains(out, secret) {
		t.Errorf("MaskText(%q) = %q: the secret planted in %q survives", in, out, p)
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_+/=-", c) >= 0
}

func TestMaskTextProperties(t *testing.T) {
	for _, in := range maskSeeds {
		checkMaskText(t, in)
	}
	for i := range plantings {
		checkPlanted(t, "", uint8(i), "")
		checkPlanted(t, "run: ", uint8(i), " && echo done")
		checkPlanted(t, `{"command":"`, uint8(i), `"}`)
	}
}

func FuzzMaskText(f *testing.F) {
	for _, in := range maskSeeds {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) { checkMaskText(t, in) })
}

func FuzzMaskTextPlanted(f *testing.F) {
	for i := range plantings {
		f.Add("", uint8(i), "")
		f.Add("echo x; ", uint8(i), " | tee log")
		f.Add(`"`, uint8(i), `"`)
		// A hint word right before: its rule's mask must not hide what
		// the planted context's rule needs.
		f.Add("# refresh the token\n", uint8(i), "")
		f.Add("password ", uint8(i), "")
	}
	f.Fuzz(checkPlanted)
}

// TestMaskTextRulesSeeTheWholeText: every rule reads the text as it was,
// not as an earlier rule left it. Masking "token <word>" or "password
// <word>" used to hide the tool name a later rule needs (mysql, sshpass,
// ...) or the name of an assignment, so the password after it survived:
// a comment line ending in "token" above a mysql command was enough.
func TestMaskTextRulesSeeTheWholeText(t *testing.T) {
	for _, in := range []string{
		"# refresh the token\nmysql -h db -u root -p" + plantedSecret + " app",
		"token mysql -h db -u root -p" + plantedSecret + " app",
		"password sshpass -p " + plantedSecret + " ssh host",
		"auth redis-cli -a " + plantedSecret + " ping",
		"Bearer curl -b sid=" + plantedSecret + " https://x",
		"basic docker login -u bob -p " + plantedSecret,
		"token --password " + plantedSecret,
		"token DB_PASSWORD: " + plantedSecret,
		`pwd="api_key": "` + plantedSecret + `"`,
	} {
		if out := MaskText(in); strings.Contains(out, plantedSecret) {
			t.Errorf("MaskText(%q) = %q", in, out)
		}
	}
}

// FuzzMaskURL: a secret planted as a URL's userinfo, a query value, a
// query piece without a name or a fragment is not shown by MaskURL,
// whatever the rest of the URL (parsing or not).
func FuzzMaskURL(f *testing.F) {
	for i := range 5 {
		f.Add("https", "mcp.example.com:8443", "/mcp", uint8(i))
		f.Add("http", "[::1", "/a?b=1&c", uint8(i))
		f.Add("h?t", "u@h#x", "/p;q", uint8(i))
	}
	f.Fuzz(func(t *testing.T, scheme, host, path string, where uint8) {
		var u string
		switch where % 5 {
		case 0:
			u = scheme + "://bob:" + plantedSecret + "@" + host + path
		case 1:
			u = scheme + "://" + plantedSecret + "@" + host + path
		case 2:
			u = scheme + "://" + host + path + "?key=" + plantedSecret
		case 3:
			u = scheme + "://" + host + path + "?" + plantedSecret
		case 4:
			u = scheme + "://" + host + path + "#" + plantedSecret
		}
		if strings.Count(u, plantedSecret) != 1 {
			return
		}
		if out := MaskURL(u); strings.Contains(out, plantedSecret) {
			t.Errorf("MaskURL(%q) = %q", u, out)
		}
	})
}
