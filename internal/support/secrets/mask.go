package secrets

import (
	"regexp"
	"strings"
)

var (
	// NAME=value, NAME: value, --name value for secret-looking names; the
	// name may be quoted ("password": "x" in JSON, 'key': 'x' in Python).
	secretAssign = regexp.MustCompile(`(?i)((?:[a-z0-9_-]*(?:token|secret|passw(?:or)?d|passphrase|pwd|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth)[a-z0-9_-]*)["']?(?:\s*[=:]\s*|\s+))("[^"]*"|'[^']*'|[^\s;&|]+)`)
	// An Authorization or Proxy-Authorization header's whole value, in any
	// scheme (ApiKey, SSWS, ...), up to a quote or the line's end.
	secretHeader = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization\s*:\s*)[^"'\r\n]+`)
	// openssl's pass:PASSWORD.
	secretPass = regexp.MustCompile(`(?i)\b(pass:)[^\s"';&|]+`)
	// Bearer xyz, Basic xyz, token xyz (GitHub's scheme).
	secretScheme = regexp.MustCompile(`(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]+`)
	// user:password@ in URLs, also without a user (redis://:password@).
	secretURL = regexp.MustCompile(`(://[^/\s:@]*:)[^@\s/]+@`)
	// -u USER:PASSWORD, --user USER:PASSWORD (curl, wget, httpie); not a
	// URL (-u redis://...), whose password secretURL masks.
	secretUserFlag = regexp.MustCompile(`(^|\s)(-u\s*|--user(?:\s+|=))(["']?[^\s:"']*:)([^\s"';&|/][^\s"';&|]*)`)
	// Long runs of letters and digits that look random (keys, tokens).
	secretWord = regexp.MustCompile(`[A-Za-z0-9_+/=-]{32,}`)
)

// secretHints are lowercase words without which secretAssign and
// secretScheme cannot match: most texts (a path, `go test ./...`) contain
// none, and skip the regular expressions, the costly part of a summary.
var secretHints = []string{"token", "secret", "passw", "passp", "pass:", "pwd", "key", "credential", "auth", "bearer", "basic"}

// MaskText replaces what looks like a secret in free text with "***":
//
//   - the value after a secret-looking name: NAME=value, NAME: value,
//     --name value, where the name contains token, secret, password,
//     passwd, passphrase, pwd, api_key, access_key, private_key, credential or auth
//     (any case; the name may be quoted, as a JSON key is; a quoted value
//     is masked up to its closing quote);
//   - an Authorization (or Proxy-Authorization) header's value, whatever
//     its scheme, and the credentials after "Bearer", "Basic" or "token";
//   - openssl's pass:PASSWORD;
//   - the password of user:password@ (or :password@) in a URL, and of
//     -u/--user user:password (curl's form);
//   - a run of 32 or more of [A-Za-z0-9_+/=-] with at least 4 digits and
//     4 letters and no slash (hex digests, base64 keys), except a SHA-256
//     digest the text names as one ("sha256 <64 hex>", namedDigest).
//
// It is best effort, not a proof that nothing secret remains: a short
// secret with an innocent name (`mysql -p hunter2`), a secret split across
// lines or quoted in ways the patterns do not know passes through. Its
// cost grows with len(s); callers that only keep a prefix should cut
// first (chain.ArgsSummary does).
func MaskText(s string) string {
	lower := strings.ToLower(s)
	for _, h := range secretHints {
		if strings.Contains(lower, h) {
			s = secretPass.ReplaceAllString(s, "$1***")
			s = secretScheme.ReplaceAllString(s, "$1 ***")
			s = secretAssign.ReplaceAllString(s, "$1***")
			// Last: what the others left of a header (a scheme they do not
			// know, its credential) goes, and no bare-value match can take
			// its closing quote along.
			s = secretHeader.ReplaceAllString(s, "$1***")
			break
		}
	}
	if strings.Contains(s, "-u") {
		s = secretUserFlag.ReplaceAllString(s, "$1$2$3***")
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = secretURL.ReplaceAllString(s, "$1***@")
	}
	if !hasLongWord(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range secretWord.FindAllStringIndex(s, -1) {
		w := s[m[0]:m[1]]
		if !looksRandom(w) || namedDigest(s[:m[0]], w) {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString("***")
		last = m[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// namedDigest: w is a SHA-256 digest (64 lowercase hex digits) that the
// text right before it names as one ("sha256 ", "sha256=", "sha256: ",
// "--sha256 "), as clawd's own supply-chain messages do. A digest is not
// a secret, and masking it would hide the `clawd mcp allow` line a user
// must copy. Limit: a 64-hex secret that someone labels sha256 is shown.
func namedDigest(before, w string) bool {
	if len(w) != 64 || strings.Trim(w, "0123456789abcdef") != "" {
		return false
	}
	before = strings.TrimRight(before, " =:")
	return len(before) >= 6 && strings.EqualFold(before[len(before)-6:], "sha256")
}

// hasLongWord reports whether s has a run of 32 characters secretWord
// matches.
func hasLongWord(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '/' || c == '=' || c == '-' {
			if n++; n >= 32 {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}

// looksRandom: a long word mixing digits and letters (a path like
// /usr/local/lib/python3 does not reach 32 characters without a slash
// boundary, but a hex digest or base64 key does).
func looksRandom(w string) bool {
	var digits, letters int
	for _, r := range w {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letters++
		}
	}
	return digits >= 4 && letters >= 4 && !strings.Contains(w, "/")
}
