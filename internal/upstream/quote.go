package upstream

import (
	"strings"

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

func shellQuote(w string) string { return safetext.ShellWord(w) }
