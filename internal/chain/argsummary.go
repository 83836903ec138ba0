package chain

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/support/inplace"
	"github.com/clawde/clawd/internal/support/secrets"
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
// not stored), and the masking (secrets.MaskText) is best effort: patterns
// of common secrets (key=value with a secret-looking key, Bearer tokens,
// long random-looking words), not a proof that nothing secret remains.
func ArgsSummary(args jsontext.Value) string { return argsSummary(args, nil) }

// argsSummary is ArgsSummary with each of known, values known to be secret
// (Chain.Secrets, longest first), replaced by secrets.Masked wherever the
// summary quotes it whole, before the pattern masking.
func argsSummary(args jsontext.Value, known []string) string {
	if len(args) == 0 {
		return ""
	}
	a, ok := summaryArgs(args)
	if !ok {
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
	// to be recognised. The masks can shrink what is kept (a long token
	// becomes ***) below maxSummary runes, so a cut at the window is marked
	// on its own: `echo <a long token>; rm -rf ~` must not read as the
	// whole command "echo ***".
	cut := false
	if len(known) > 0 {
		s, cut = maskKnown(s, known, maskWindow)
	} else if len(s) > maskWindow {
		s, cut = s[:runeStart(s, maskWindow)], true
	}
	s = secrets.MaskText(s)
	if n := utf8.RuneCountInString(s); n > maxSummary || cut && n == maxSummary {
		s = s[:runeIndex(s, maxSummary-1)] + "…"
	} else if cut {
		s += "…"
	}
	return s
}

// runeStart is the largest i <= n at which a rune of s starts (n <=
// len(s)), so s[:i] splits no rune.
func runeStart(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// runeIndex is the byte offset of s's rune number n (len(s) if s has no
// more runes).
func runeIndex(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// summarised are the members ArgsSummary shows, when they are strings.
type summarised struct {
	Path, WorkingDir, Command, Query *string
}

// summaryArgs reads the top-level string members path, working_dir, command
// and query of an arguments object in one pass. A member of another type is
// skipped, not a reason to show nothing: an upstream tool's schema is its
// own, and {"command":"...","path":0} must not hide its command from the
// row. ok is false when args is not an object.
func summaryArgs(args jsontext.Value) (a summarised, ok bool) {
	dec := inplace.Get(args)
	defer dec.Release()
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return a, false
	}
	for dec.PeekKind() == '"' {
		k, err := dec.ReadValue()
		if err != nil {
			return a, true
		}
		var dst **string
		switch string(inplace.Unquoted(k)) {
		case "path":
			dst = &a.Path
		case "working_dir":
			dst = &a.WorkingDir
		case "command":
			dst = &a.Command
		case "query":
			dst = &a.Query
		}
		v, err := dec.ReadValue()
		if err != nil {
			return a, true
		}
		if dst != nil && v.Kind() == '"' {
			s := string(inplace.Unquoted(v))
			*dst = &s
		}
	}
	return a, true
}

// maskWindow is how much of a summary is masked before it is cut to
// maxSummary runes: 4 bytes a rune, and room for a secret that crosses the
// cut.
const maskWindow = 8 * maxSummary

// maskKnown is s's first limit bytes (fewer, so as not to split a rune)
// with every occurrence of a known value replaced by secrets.Masked
// (overlapping occurrences as one); cut says part of s was left out. A
// value that starts before limit and runs past it is replaced whole, so no
// first part of it is left at the cut. Each value is looked for with
// strings.Index, so the cost is the number of values times the window, at
// memory speed, and nothing is allocated when none occurs.
func maskKnown(s string, known []string, limit int) (masked string, cut bool) {
	var spans [][2]int
	end := runeStart(s, min(len(s), limit))
	for _, v := range known {
		if v == "" {
			continue
		}
		// Occurrences that start before limit.
		hay := s[:min(len(s), limit-1+len(v))]
		for from := 0; ; {
			i := strings.Index(hay[from:], v)
			if i < 0 {
				break
			}
			i += from
			spans = append(spans, [2]int{i, i + len(v)})
			end = max(end, i+len(v))
			from = i + 1
		}
	}
	return secrets.MaskSpans(s[:end], spans, secrets.Masked), end < len(s)
}
