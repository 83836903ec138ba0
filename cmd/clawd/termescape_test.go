package main

import (
	"errors"
	"strings"
	"testing"
)

// One table for both ways of showing an upstream's text on a terminal:
// oneLine (a name, an error: one line, cut) and terminalSafe (a server's
// stderr: lines kept).
func TestTerminalEscape(t *testing.T) {
	for _, tc := range []struct {
		in, oneLine, terminalSafe string
		max                       int
	}{
		{in: "plain text", oneLine: "plain text", terminalSafe: "plain text"},
		{in: "a\nb\tc", oneLine: `a\x0ab\x09c`, terminalSafe: "a\nb\tc"},
		{in: "\x1b[31mred\x1b[0m", oneLine: `\x1b[31mred\x1b[0m`, terminalSafe: `\x1b[31mred\x1b[0m`},
		{in: "bidi \u202eevil", oneLine: `bidi \u202eevil`, terminalSafe: `bidi \u202eevil`},
		{in: "bad \xff utf8", oneLine: `bad \xff utf8`, terminalSafe: `bad \xff utf8`},
		{in: "replacement \uFFFD itself", oneLine: "replacement \uFFFD itself", terminalSafe: "replacement \uFFFD itself"},
		{in: "carriage\rreturn", oneLine: `carriage\x0dreturn`, terminalSafe: `carriage\x0dreturn`},
		{in: "abcdef", max: 3, oneLine: "abc...", terminalSafe: "abcdef"},
		// Printable to unicode.IsPrint, invisible on a terminal: a variation
		// selector and a tag character can hide text in a name.
		{in: "a\ufe0fb\U000e0041c", oneLine: `a\ufe0fb\ue0041c`, terminalSafe: `a\ufe0fb\ue0041c`},
	} {
		if got := oneLine(tc.in, tc.max); got != tc.oneLine {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.oneLine)
		}
		if got := terminalSafe(tc.in); got != tc.terminalSafe {
			t.Errorf("terminalSafe(%q) = %q, want %q", tc.in, got, tc.terminalSafe)
		}
	}
}

// Every error the command prints passes the escaper: an upstream's error
// text (here in a runtime error and in one cobra reports) cannot drive the
// terminal, and the exit codes stay 1 and 2.
func TestReportErrorEscapes(t *testing.T) {
	var b strings.Builder
	if code := reportError(&b, runtimeError("mcp test evil: initialize: \x1b]0;owned\x07\x1b[2J")); code != 1 {
		t.Errorf("runtime error: exit %d, want 1", code)
	}
	if code := reportError(&b, errors.New("unknown command \"\x1b[31mx\"")); code != 2 {
		t.Errorf("cobra error: exit %d, want 2", code)
	}
	if code := reportError(&b, nil); code != 0 {
		t.Errorf("no error: exit %d, want 0", code)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("a raw control character reached stderr: %q", out)
	}
	for _, want := range []string{`clawd: mcp test evil: initialize: \x1b]0;owned\x07\x1b[2J` + "\n", `unknown command "\x1b[31mx"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
}
