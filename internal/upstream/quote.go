package upstream

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clawde/clawd/internal/support/safetext"
)

// QuoteCommand writes a command line a POSIX shell reads back as exactly
// these words: safe words as they are, others in single quotes, and words
// with control or non-printable characters as $'...' with escapes, so the
// terminal shows every byte and interprets none.
func QuoteCommand(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(w string) string {
	if w == "" {
		return "''"
	}
	safe, printable := true, true
	for _, r := range w {
		if !(r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("@%+=:,./_-", r))) {
			safe = false
		}
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar || safetext.Forbidden(r) {
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
		case !unicode.IsPrint(r) || safetext.Forbidden(r): // invisible though printable: variation selectors, fillers
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
