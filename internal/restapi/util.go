package restapi

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// clip cuts s to at most n bytes on a rune boundary, as valid UTF-8, for
// echoing client input in messages.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
