package store

import (
	"strconv"
	"time"

	"github.com/clawde/clawd/internal/support/jsonenc"
)

// appendLineBody appends l as its journal line without the sequence number:
// every member after "seq", the closing brace and the newline. Record
// encodes this outside the writer's lock and prefixes the number under it
// (appendLineHead), so concurrent callers wait on the lock only for the
// write. The result decodes (encoding/json, as recovery reads it) to the
// same journalLine json.Marshal's would: the same members in the same
// order, omitempty alike, invalid UTF-8 replaced by U+FFFD alike
// (TestJournalLineEncoding). It escapes less: only what JSON requires, not
// HTML characters.
func appendLineBody(dst []byte, l *journalLine) []byte {
	dst = append(dst, `,"pid":`...)
	dst = strconv.AppendInt(dst, l.PID, 10)
	dst = appendMember(dst, "ts", l.Timestamp)
	dst = appendMember(dst, "entity", l.EntityID)
	dst = appendMember(dst, "tool", l.ToolID)
	if l.TrustLevel != nil {
		dst = append(dst, `,"level":`...)
		dst = strconv.AppendInt(dst, *l.TrustLevel, 10)
	}
	dst = appendMember(dst, "result", l.Result)
	dst = appendMember(dst, "reason", l.Reason)
	dst = append(dst, `,"latency_ns":`...)
	dst = strconv.AppendInt(dst, l.LatencyNS, 10)
	dst = appendMember(dst, "step", l.Step)
	dst = appendMember(dst, "transport", l.Transport)
	dst = appendMember(dst, "request_id", l.RequestID)
	dst = appendOptional(dst, "client_claim", l.ClientClaim)
	dst = appendOptional(dst, "credential_id", l.CredentialID)
	dst = appendOptional(dst, "args_sha256", l.ArgsSHA256)
	dst = appendOptional(dst, "args_summary", l.ArgsSummary)
	dst = appendOptional(dst, "server", l.Server)
	return append(dst, '}', '\n')
}

// appendLineHead appends the line's start, `{"seq":N`, which the body
// continues.
func appendLineHead(dst []byte, seq int64) []byte {
	return strconv.AppendInt(append(dst, `{"seq":`...), seq, 10)
}

// appendMember appends `,"name":"value"`; name needs no escaping.
func appendMember(dst []byte, name, value string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return jsonenc.AppendStringChecked(dst, value)
}

// appendOptional is appendMember, or nothing for "" (omitempty).
func appendOptional(dst []byte, name, value string) []byte {
	if value == "" {
		return dst
	}
	return appendMember(dst, name, value)
}

// formatTime is the audit and registry time format: UTC, milliseconds,
// "Z" ("2026-06-01T10:00:00.123Z"), written digit by digit: it runs for
// every decision, and time.Format's layout parsing was a visible part of
// recording one. Years outside 0-9999 fall back to time.Format.
func formatTime(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format("2006-01-02T15:04:05.000Z")
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	var b [24]byte
	put := func(i, v, digits int) {
		for k := i + digits - 1; k >= i; k-- {
			b[k] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, year, 4)
	b[4] = '-'
	put(5, int(month), 2)
	b[7] = '-'
	put(8, day, 2)
	b[10] = 'T'
	put(11, hour, 2)
	b[13] = ':'
	put(14, minute, 2)
	b[16] = ':'
	put(17, sec, 2)
	b[19] = '.'
	put(20, ms, 3)
	b[23] = 'Z'
	return string(b[:])
}
