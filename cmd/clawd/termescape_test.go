package main

import "testing"

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
	} {
		if got := oneLine(tc.in, tc.max); got != tc.oneLine {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.oneLine)
		}
		if got := terminalSafe(tc.in); got != tc.terminalSafe {
			t.Errorf("terminalSafe(%q) = %q, want %q", tc.in, got, tc.terminalSafe)
		}
	}
}
