// Package safetext makes text that came from someone else (an upstream MCP
// server's tool descriptions, names, error messages) safe to show to a
// person in a terminal and to a model: what it shows is what there is.
//
// Removed:
//   - terminal escape sequences, whole: CSI (ESC [ ... final byte, or
//     U+009B ...), OSC (ESC ] ... BEL or ST, or U+009D ...; an OSC 8
//     hyperlink loses its target and keeps its visible text), DCS, SOS, PM
//     and APC strings (ESC P/X/^/_ ... ST, or their C1 forms), and two- or
//     three-byte ESC sequences (ESC c, ESC ( B);
//   - every other C0 and C1 control character (U+0000-U+001F, U+007F,
//     U+0080-U+009F) except newline and tab; a carriage return is dropped,
//     so "\r\n" becomes "\n" and a line cannot be overwritten;
//   - format characters (Unicode category Cf): zero-width space and joiners,
//     bidi embeddings, overrides and isolates (U+202A-U+202E,
//     U+2066-U+2069), marks (U+200E, U+200F, U+061C), the byte order mark,
//     and the tag characters U+E0000-U+E007F that can carry invisible ASCII
//     instructions;
//   - variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF), which can
//     encode hidden bytes after any visible character, and the Hangul
//     fillers (U+115F, U+1160, U+3164, U+FFA0) that render as nothing;
//   - line and paragraph separators (U+2028, U+2029) become "\n".
//
// Invalid UTF-8 becomes U+FFFD. Clean is idempotent and leaves text without
// any of these unchanged (no allocation).
//
// Limits: homoglyphs (a Cyrillic "а" for a Latin "a"), combining marks and
// plain-text instructions ("ignore previous instructions") are visible
// text and are kept; deciding what text means is not this package's job.
package safetext

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
)

// Forbidden reports whether r never appears in Clean's output.
func Forbidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r == utf8.RuneError:
		return false // the replacement character itself is visible
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	case r >= 0xE0000 && r <= 0xE007F:
		return true // tags (most are Cf; the unassigned ones too)
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Clean returns s with terminal escapes and invisible characters removed
// (see the package comment). Newlines and tabs are kept.
func Clean(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		switch {
		case r == esc:
			i += escapeLen(s[i:])
			continue
		case r == 0x9b: // C1 CSI
			i += n + csiLen(s[i+n:])
			continue
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // C1 DCS, SOS, OSC, PM, APC
			i += n + stringLen(s[i+n:])
			continue
		case r == 0x2028 || r == 0x2029:
			b.WriteByte('\n')
		case Forbidden(r):
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Line is Clean for text shown on one line (a name, a version, an audit
// reason): newlines and tabs become spaces too.
func Line(s string) string {
	s = Clean(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// clean reports whether s needs no change.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || Forbidden(r) {
			return false
		}
		i += n - 1
	}
	return true
}

// escapeLen is the length of the escape sequence at the start of s (s[0]
// is ESC): the whole sequence, so that no half of it is left to print.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		return 2 + csiLen(s[2:])
	case ']', 'P', 'X', '^', '_':
		return 2 + stringLen(s[2:])
	case esc:
		return 1 // the second ESC starts a sequence of its own
	}
	// ESC, intermediates (0x20-0x2F), then one final byte (ESC ( B, ESC c).
	i := 1
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// csiLen is the length of a CSI sequence's body: parameter and
// intermediate bytes, then the final byte (0x40-0x7E). A body cut short by
// anything else ends before that byte.
func csiLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c <= 0x3f:
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		default:
			return i
		}
	}
	return len(s)
}

// stringLen is the length of an OSC/DCS/SOS/PM/APC string's body up to and
// including its terminator (BEL, ESC \ or C1 ST). An unterminated string
// runs to the end of s: a terminal would swallow it all the same.
func stringLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == bel:
			return i + 1
		case s[i] == esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i // an ESC that is no ST starts the next sequence
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c: // U+009C ST
			return i + 2
		}
	}
	return len(s)
}

// ValidUTF8 is s with each run of invalid UTF-8 bytes replaced by U+FFFD,
// and nothing else changed: for text that must be valid in JSON or SQLite
// but is shown as it is otherwise (a file name, a line of a file, an
// upstream's tool name). s itself when it is valid (no allocation).
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// ShellWord writes w as a POSIX shell reads it back as exactly this one
// word: a safe word as it is, others in single quotes, and one with
// control or non-printable characters as $'...' with escapes, so the
// terminal shows every byte and interprets none. A message that shows a
// path or name the user gave passes it through ShellWord: it stays on one
// line, and a plain path reads as itself.
func ShellWord(w string) string {
	if w == "" {
		return "''"
	}
	safe, printable := true, true
	for _, r := range w {
		if !(r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("@%+=:,./_-", r))) {
			safe = false
		}
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar || Forbidden(r) {
			printable = false
		}
	}
	if safe {
		return w
	}
	if printable {
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(w); {
		r, n := rune(w[i]), 1
		if r >= 0x80 {
			r, n = utf8.DecodeRuneInString(w[i:])
		}
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == unicode.ReplacementChar && n == 1 || r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, "\\x%02x", w[i])
		case !unicode.IsPrint(r) || Forbidden(r): // invisible though printable: variation selectors, fillers
			for j := 0; j < n; j++ {
				fmt.Fprintf(&b, "\\x%02x", w[i+j])
			}
		default:
			b.WriteString(w[i : i+n])
		}
		i += n
	}
	b.WriteString("'")
	return b.String()
}

// PathError is err about the path given as what's value (what "workspace",
// "config"): "what PATH: op OTHERPATH: cause", each path a ShellWord so a
// newline in a name cannot split the message. The cause stays wrapped for
// errors.Is.
func PathError(what, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if pe.Path == path {
			return fmt.Errorf("%s %s: %s: %w", what, ShellWord(path), pe.Op, pe.Err)
		}
		return fmt.Errorf("%s %s: %s %s: %w", what, ShellWord(path), pe.Op, ShellWord(pe.Path), pe.Err)
	}
	return fmt.Errorf("%s %s: %w", what, ShellWord(path), err)
}
