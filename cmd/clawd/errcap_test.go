package main

import (
	"errors"
	"strings"
	"testing"
)

// TestReportErrorCapsLongLines: an error that quotes a huge value (a 120 KB
// entity, origin or tool name) is printed with the value cut in the middle,
// so the start and the end, where the message says what to do, both stay;
// short lines are printed whole.
func TestReportErrorCapsLongLines(t *testing.T) {
	huge := strings.Repeat("a", 120000)
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"usage", usageError("entity %q: use letters", "local:"+huge)},
		{"cobra", errors.New(`unknown command "` + huge + `" for "clawd"`)},
		{"multibyte", usageError("name %q: use letters", strings.Repeat("é", 60000))},
	} {
		var b strings.Builder
		reportError(&b, tc.err)
		got := b.String()
		if len(got) > 2*maxErrorLine {
			t.Errorf("%s: %d bytes printed", tc.name, len(got))
		}
		if !strings.Contains(got, "bytes cut") || !strings.HasPrefix(got, "clawd: ") {
			t.Errorf("%s: %.200q", tc.name, got)
		}
		if tc.name != "cobra" && !strings.Contains(got, "use letters") {
			t.Errorf("%s: the end of the message is lost: %.200q", tc.name, got[len(got)-200:])
		}
		if !strings.HasSuffix(got, "\n") || strings.Contains(got, "\uFFFD") {
			t.Errorf("%s: broken output %q", tc.name, got[len(got)-100:])
		}
	}
	var b strings.Builder
	reportError(&b, usageError("short %q", "value"))
	if b.String() != "clawd: short \"value\"\n" {
		t.Errorf("short message changed: %q", b.String())
	}
}
