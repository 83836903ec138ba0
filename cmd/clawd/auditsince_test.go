package main

import (
	"testing"
	"time"
)

// TestParseSinceHugeDaysRefused: a day count so large that going back by it
// overflows must not wrap into a cutoff after now, where `audit prune
// --older-than` would delete every row; it is refused, and sane counts,
// Go durations and times still parse.
func TestParseSinceHugeDaysRefused(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{
		"9223372036854775807d", "213503982334601d", "1067519911673000d",
		"106751991167300d", "99999999999d", "1000001d",
	} {
		if got, err := parseSince(s, now); err == nil {
			t.Errorf("%s: %v, want an error", s, got)
		}
	}
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"0d", now},
		{"90d", now.AddDate(0, 0, -90)},
		{"1000000d", now.AddDate(0, 0, -1000000)},
		{"24h", now.Add(-24 * time.Hour)},
		{"2026-12-05T00:00:00Z", time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)},
	} {
		got, err := parseSince(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
