package main

import (
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/store"
)

// Text in an audit row that a client chose (an unknown tool's name, its
// clientInfo.name, its arguments) or that reached the database some other
// way (a row edited behind clawd's back, a forged journal line) cannot
// drive the terminal, hide itself, or pose as columns of the table: every
// column is shown with control and invisible characters replaced, and runs
// of spaces in it collapsed, so only the table's own gaps are two wide.
func TestAuditTableShowsHostileTextInert(t *testing.T) {
	s := func(v string) *string { return &v }
	rows := []store.AuditRow{
		{ID: 1, Timestamp: "2026-06-01T10:00:00.000Z", EntityID: "local:ws", ToolID: "read_file     path: a     2     Allow     handler",
			Result: "Deny", Step: "lookup", Reason: "unknown_tool", ClientClaim: s("cc \u00a0\u3000\u202eevil"), ArgsSummary: s("command: ls      2     Allow")},
		{ID: 2, Timestamp: "2026-06-01T10:00:00.000Z\x1b[2J", EntityID: "local:ws\x1b]52;c;b3duZWQ=\x07", ToolID: "bash",
			Result: "Deny", Step: "policy\u2028x", Reason: "trust_level_too_low\x1b[31m\u200b", CredentialID: s("cred\x07")},
	}
	var b strings.Builder
	p := auditPrinter{w: &b, loc: time.UTC}
	if err := p.print(rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and 2 rows:\n%s", len(lines), out)
	}
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u200b", "\u2028", "path: a  ", "ls  ", "cc  ", "\u00a0", "\u3000"} {
		if strings.Contains(out, bad) {
			t.Errorf("the table shows %q:\n%s", bad, out)
		}
	}
	// The real RESULT column is where the header says it is.
	col := strings.Index(lines[0], "RESULT")
	for _, l := range lines[1:] {
		if r := []rune(l); len(r) < col+4 || string(r[col:col+4]) != "Deny" {
			t.Errorf("row %q: RESULT column moved", l)
		}
	}
}
