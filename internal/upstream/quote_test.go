//go:build unix

package upstream

import (
	"os/exec"
	"strings"
	"testing"
	"unicode"
)

// A quoted word is read back by a POSIX shell as exactly that word, and a
// word with anything a terminal would not show as itself (control
// characters, invalid UTF-8, invisible characters that unicode.IsPrint
// calls printable) is quoted in plain ASCII, so what is shown is every byte.
func TestShellQuote(t *testing.T) {
	words := []string{
		"plain", "/usr/bin/node", "", "two words", "it's", `back\slash`, "$HOME", "a\nb", "\x1b[2Jclear",
		"bad\xffutf8", "hidden\ufe0fselector", "tag\U000e0041text", "filler\u3164here", "bidi\u202eevil", "héllo",
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to read the quoted words back")
	}
	for _, w := range words {
		q := shellQuote(w)
		out, err := exec.Command(bash, "-c", "printf '%s' "+q).Output()
		if err != nil || string(out) != w {
			t.Errorf("shellQuote(%q) = %s, which bash reads as %q (%v)", w, q, out, err)
		}
		visible := true
		for _, r := range w {
			if r > unicode.MaxASCII && !(unicode.IsLetter(r) && r < 0x3000) {
				visible = false
			}
			if r < 0x20 || r == 0x7f {
				visible = false
			}
		}
		if !visible && strings.IndexFunc(q, func(r rune) bool { return r > unicode.MaxASCII || r < 0x20 }) >= 0 {
			t.Errorf("shellQuote(%q) = %q shows characters that are not plain ASCII", w, q)
		}
	}
}
