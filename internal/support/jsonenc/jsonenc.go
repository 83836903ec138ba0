// Package jsonenc appends JSON strings fast. Tool results are mostly one big
// string (a file's content, a command's output) that is escaped twice: once
// inside the result object and once more when that object becomes the MCP
// text content. A general encoder looks at each byte; this package skips
// eight bytes at a time while none needs escaping.
package jsonenc

import (
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialMask flags (in each byte's high bit) the bytes of the
// little-endian word w that JSON requires to be escaped: below 0x20, '"'
// and '\\'. Bytes above a flagged one may be flagged falsely (borrows), but
// the lowest flagged byte is always a true one, which is all AppendString
// uses. Bytes >= 0x80 are never flagged: callers guarantee valid UTF-8.
func specialMask(w uint64) uint64 {
	ctl := (w - ones*0x20) &^ w
	q := w ^ (ones * '"')
	bs := w ^ (ones * '\\')
	return (ctl | ((q - ones) &^ q) | ((bs - ones) &^ bs)) & highs
}

// load64 reads s[i:i+8] as a little-endian word (one load after the
// compiler merges the byte loads).
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// safe marks the ASCII bytes that need no escaping.
var safe = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = false, false
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal. s must be valid UTF-8
// (checked by the caller, as read_file does, or produced by an encoder);
// bytes >= 0x80 are copied unchanged. Only '"', '\\' and control characters
// are escaped, so the output is the shortest valid form.
func AppendString(dst []byte, s string) []byte {
	if cap(dst)-len(dst) < len(s)+2 {
		dst = append(make([]byte, 0, len(dst)+len(s)+len(s)/8+16), dst...)
	}
	dst = append(dst, '"')
	start, i, n := 0, 0, len(s)
	for i < n {
		if i+8 <= n {
			m := specialMask(load64(s, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3 // the first byte to escape
		} else if safe[s[i]] {
			i++
			continue
		}
		c := s[i]
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendBytes is AppendString for a byte slice (valid UTF-8), without
// copying it.
func AppendBytes(dst, b []byte) []byte {
	return AppendString(dst, unsafe.String(unsafe.SliceData(b), len(b)))
}

// AppendStringChecked is AppendString for input of unknown encoding: it
// replaces each invalid UTF-8 byte with U+FFFD so the output stays valid.
func AppendStringChecked(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return AppendString(dst, s)
	}
	return AppendString(dst, toValidUTF8(s))
}

func toValidUTF8(s string) string {
	fixed := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fixed = append(fixed, "\ufffd"...)
		} else {
			fixed = append(fixed, s[i:i+size]...)
		}
		i += size
	}
	return string(fixed)
}
