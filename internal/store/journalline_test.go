package store

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// encodeLine is a whole journal line as Record writes it.
func encodeLine(l *journalLine) []byte {
	return appendLineBody(appendLineHead(nil, l.Seq), l)
}

// checkLineEncoding fails t unless l's line is one valid JSON object and a
// newline, and decodes to what json.Marshal's encoding of l decodes to.
func checkLineEncoding(t *testing.T, l *journalLine) {
	t.Helper()
	line := encodeLine(l)
	if len(line) == 0 || line[len(line)-1] != '\n' || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("not one line ending in a newline: %q", line)
	}
	if !json.Valid(line) {
		t.Fatalf("not valid JSON: %q", line)
	}
	std, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var got, want journalLine
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("decoding %q: %v", line, err)
	}
	if err := json.Unmarshal(std, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("line %q decodes to %+v; encoding/json's %q to %+v", line, got, std, want)
	}
	var members map[string]json.RawMessage
	json.Unmarshal(line, &members)
	var stdMembers map[string]json.RawMessage
	json.Unmarshal(std, &stdMembers)
	if len(members) != len(stdMembers) {
		t.Fatalf("line %q has %d members, encoding/json's %q %d (omitempty differs)", line, len(members), std, len(stdMembers))
	}
}

// TestJournalLineEncoding: the hand-written line decodes as json.Marshal's
// does, for every member filled or empty, strings that need escaping and
// invalid UTF-8; for plain ASCII it is byte for byte the same.
func TestJournalLineEncoding(t *testing.T) {
	level := int64(3)
	zero := int64(0)
	full := journalLine{Seq: 42, PID: 1234, Timestamp: "2026-12-04T08:00:00.123Z", EntityID: "cc:ws", ToolID: "fs__read",
		TrustLevel: &level, Result: "Allow", Reason: "policy_allow", LatencyNS: 98765, Step: "policy",
		Transport: "stdio", RequestID: "7", ClientClaim: "claude-code", CredentialID: "cred-1",
		ArgsSHA256: strings.Repeat("ab", 32), ArgsSummary: `{"path":"a.txt"}`, Server: "fs"}
	for _, tc := range []struct {
		name  string
		edit  func(l *journalLine)
		exact bool // byte-for-byte json.Marshal's, newline added
	}{
		{"every member", func(*journalLine) {}, false}, // ArgsSummary has quotes: escaped alike, but compare decoded
		{"plain ASCII", func(l *journalLine) { l.ArgsSummary = "path=a.txt" }, true},
		{"optional members empty", func(l *journalLine) {
			l.TrustLevel, l.ClientClaim, l.CredentialID, l.ArgsSHA256, l.ArgsSummary, l.Server = nil, "", "", "", "", ""
		}, true},
		{"level zero is kept", func(l *journalLine) { l.TrustLevel = &zero; l.ArgsSummary = "" }, true},
		{"negative numbers", func(l *journalLine) { l.Seq, l.PID, l.LatencyNS = -1, -2, -3; l.ArgsSummary = "" }, true},
		{"escapes", func(l *journalLine) {
			l.ArgsSummary = "quote \" backslash \\ newline \n tab \t cr \r nul \x00 esc \x1b del \x7f"
		}, false},
		{"HTML and line separators", func(l *journalLine) { l.Reason = "<script>&amp; \u2028 \u2029" }, false},
		{"unicode", func(l *journalLine) { l.EntityID = "日本語 ü 🙂"; l.ToolID = "tool\u00e9" }, false},
		{"invalid UTF-8", func(l *journalLine) { l.ArgsSummary = "a\xffb\xc3(c\xed\xa0\x80d"; l.Server = "\x80" }, false},
		{"long", func(l *journalLine) { l.ArgsSummary = strings.Repeat("x\"", 5000) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := full
			tc.edit(&l)
			checkLineEncoding(t, &l)
			if tc.exact {
				std, _ := json.Marshal(&l)
				if got := encodeLine(&l); !bytes.Equal(got, append(std, '\n')) {
					t.Errorf("line\n %s\nencoding/json\n %s", got, std)
				}
			}
		})
	}
}

func FuzzJournalLine(f *testing.F) {
	f.Add("cc:ws", "fs__read", `{"path":"a"}`, "reason", int64(7))
	f.Add("\xff\x00", "\u2028<>&", "\\\"", "", int64(-1))
	f.Fuzz(func(t *testing.T, entity, tool, summary, reason string, n int64) {
		l := journalLine{Seq: n, PID: n, Timestamp: "2026-12-04T08:00:00.000Z", EntityID: entity, ToolID: tool,
			Result: "Deny", Reason: reason, LatencyNS: n, Step: reason, Transport: tool, RequestID: summary,
			ClientClaim: entity, ArgsSummary: summary, Server: tool}
		if n%2 == 0 {
			l.TrustLevel = &n
		}
		checkLineEncoding(t, &l)
	})
}

// TestFormatTime: the hand-written format is time.Format's, in every zone,
// at the edges of its fields and of the years it writes itself.
func TestFormatTime(t *testing.T) {
	const layout = "2006-01-02T15:04:05.000Z"
	east := time.FixedZone("east", 14*3600)
	west := time.FixedZone("west", -12*3600)
	times := []time.Time{
		time.Date(2026, 12, 4, 8, 0, 0, 123456789, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 1, 2, 3, 999000, east),
		time.Date(2026, 3, 1, 1, 2, 3, 1000000, west),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 6, 15, 12, 0, 0, 0, time.UTC),
		{},
		time.Unix(0, 0),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		times = append(times, time.Unix(r.Int64N(400*365*86400)-100*365*86400, r.Int64N(1e9)).In(east))
	}
	for _, tm := range times {
		if got, want := formatTime(tm), tm.UTC().Format(layout); got != want {
			t.Errorf("formatTime(%v) = %q, want %q", tm, got, want)
		}
	}
}

// BenchmarkJournalLine compares the line encoder with json.Marshal of the
// same line (what Record used before), and formatTime with time.Format.
func BenchmarkJournalLine(b *testing.B) {
	level := int64(3)
	l := &journalLine{Seq: 42, PID: 1234, Timestamp: "2026-12-04T08:00:00.123Z", EntityID: "cc:ws", ToolID: "everything__echo",
		TrustLevel: &level, Result: "Allow", Reason: "policy_allow", LatencyNS: 98765, Step: "policy",
		Transport: "stdio", RequestID: "7", ArgsSHA256: strings.Repeat("ab", 32), ArgsSummary: `{"message":"hello"}`, Server: "everything"}
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			buf, _ := json.Marshal(l)
			_ = append(buf, '\n')
		}
	})
	b.Run("append", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			body := appendLineBody(make([]byte, 0, 512), l)
			buf = append(appendLineHead(buf[:0], l.Seq), body...)
		}
	})
	now := time.Now()
	b.Run("time.Format", func(b *testing.B) {
		for b.Loop() {
			_ = now.UTC().Format("2006-01-02T15:04:05.000Z")
		}
	})
	b.Run("formatTime", func(b *testing.B) {
		for b.Loop() {
			_ = formatTime(now)
		}
	})
}
