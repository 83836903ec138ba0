package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// maxSummary caps the argument summary of an audit row.
const maxSummary = 120

// ArgsDigest is the hex SHA-256 of a call's arguments as the client sent
// them ("" for none): it proves which arguments a row was about, given the
// arguments, without storing them.
func ArgsDigest(args jsontext.Value) string {
	if len(args) == 0 {
		return ""
	}
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// ArgsSummary is a short, secret-masked account of a call's arguments for
// the audit log: the path (or working_dir), the command's first line, a
// search's query. It is never the whole argument set (file contents are
// not stored), and the masking is best effort: patterns of common secrets
// (key=value with a secret-looking key, Bearer tokens, long random-looking
// words), not a proof that nothing secret remains.
func ArgsSummary(args jsontext.Value) string {
	if len(args) == 0 {
		return ""
	}
	var a struct {
		Path       *string `json:"path"`
		WorkingDir *string `json:"working_dir"`
		Command    *string `json:"command"`
		Query      *string `json:"query"`
	}
	if json.Unmarshal(args, &a, json.RejectUnknownMembers(false)) != nil {
		return ""
	}
	var parts []string
	if a.Command != nil {
		first, _, more := strings.Cut(strings.TrimSpace(*a.Command), "\n")
		if more {
			first += " …"
		}
		parts = append(parts, "command: "+first)
	}
	if a.Query != nil {
		parts = append(parts, "query: "+*a.Query)
	}
	if a.Path != nil {
		parts = append(parts, "path: "+*a.Path)
	}
	if a.WorkingDir != nil {
		parts = append(parts, "working_dir: "+*a.WorkingDir)
	}
	s := strings.Join(parts, "; ")
	// Only the first maxSummary runes are kept, so the masking never needs
	// to look further than a few times that: a one-line command or a path
	// of megabytes costs no more than a short one. A secret that starts
	// within the kept part and runs past the cut is still long enough here
	// to be recognised.
	if len(s) > maskWindow {
		s = s[:maskWindow]
	}
	s = MaskSecrets(s)
	if r := []rune(s); len(r) > maxSummary {
		s = string(r[:maxSummary-1]) + "…"
	}
	return s
}

// maskWindow is how much of a summary is masked before it is cut to
// maxSummary runes: 4 bytes a rune, and room for a secret that crosses the
// cut.
const maskWindow = 8 * maxSummary

var (
	// NAME=value, NAME: value, --name value for secret-looking names.
	secretAssign = regexp.MustCompile(`(?i)((?:[a-z0-9_-]*(?:token|secret|passw(?:or)?d|pwd|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth)[a-z0-9_-]*)(?:\s*[=:]\s*|\s+))("[^"]*"|'[^']*'|[^\s;&|]+)`)
	// Authorization: Bearer xyz, Basic xyz.
	secretScheme = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	// user:password@ in URLs.
	secretURL = regexp.MustCompile(`(://[^/\s:@]+:)[^@\s/]+@`)
	// Long runs of letters and digits that look random (keys, tokens).
	secretWord = regexp.MustCompile(`[A-Za-z0-9_+/=-]{32,}`)
)

// secretHints are lowercase words without which secretAssign and
// secretScheme cannot match: most summaries (a path, `go test ./...`)
// contain none, and skip the regular expressions (about 10 us a call).
var secretHints = []string{"token", "secret", "passw", "pwd", "key", "credential", "auth", "bearer", "basic"}

// MaskSecrets replaces what looks like a secret in s with "***".
func MaskSecrets(s string) string {
	lower := strings.ToLower(s)
	for _, h := range secretHints {
		if strings.Contains(lower, h) {
			s = secretScheme.ReplaceAllString(s, "$1 ***")
			s = secretAssign.ReplaceAllString(s, "$1***")
			break
		}
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = secretURL.ReplaceAllString(s, "$1***@")
	}
	if !hasLongWord(s) {
		return s
	}
	return secretWord.ReplaceAllStringFunc(s, func(w string) string {
		if looksRandom(w) {
			return "***"
		}
		return w
	})
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
