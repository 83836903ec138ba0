package restapi

import (
	"fmt"
	"io"
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

// readAll reads r into b, growing as data arrives (not by what a client
// claims).
func readAll(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				return b, nil
			}
			return b, err
		}
	}
}
