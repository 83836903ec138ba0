package identity

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Rewrite returns the tool arguments args (a JSON object, or empty for {})
// without any member whose decoded name is in strip, and, when name is not
// empty, with name: value appended. Other members are kept in order
// with their values compacted (same JSON, no insignificant whitespace).
//
// The arguments are decoded strictly (jsontext's defaults): a name given
// twice or invalid UTF-8 is an error, so an object cannot carry a second
// copy of a reserved name that a lenient upstream parser would read instead
// of clawd's. Names are compared after unescaping, so "\u005f_mateclaw_user__"
// is stripped too, and without regard to case ("__MATECLAW_USER__": see
// reserved). When nothing is to be added and no stripped name can occur
// (mayHold), args is returned as it is without decoding.
func Rewrite(args jsontext.Value, strip []string, name, value string) (jsontext.Value, error) {
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	if name == "" && !mayHold(args, strip) {
		return args, nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("the tool arguments are not a JSON object")
	}
	var out bytes.Buffer
	out.Grow(len(args) + len(name) + len(value) + 8)
	enc := jsontext.NewEncoder(&out)
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
		}
		k := tok.String() // the token is void after the next read
		v, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
		}
		if reserved(k, strip) || reserved(k, []string{name}) {
			continue
		}
		if err := enc.WriteToken(jsontext.String(k)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(v); err != nil {
			return nil, err
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return nil, fmt.Errorf("the tool arguments are not valid JSON: %v", err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("the tool arguments have data after the object")
	}
	if name != "" {
		if err := enc.WriteToken(jsontext.String(name)); err != nil {
			return nil, err
		}
		if err := enc.WriteToken(jsontext.String(value)); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

// reserved reports whether the member name k is one of names to a parser
// that folds case: Go's encoding/json matches a struct field so (the long
// s and the Kelvin sign included, by Unicode simple folding, which
// strings.EqualFold is), and others can be told to. Such a parser would
// take "__MATECLAW_USER__" for the reserved name, and read either copy
// when clawd's is there too.
func reserved(k string, names []string) bool {
	for _, n := range names {
		if n != "" && strings.EqualFold(k, n) {
			return true
		}
	}
	return false
}

// mayHold reports whether a member named in names (without regard to case,
// as reserved) could be in args: only when a string starts with one of the
// names in ASCII letters of either case, or an escape or one of the two
// non-ASCII letters that fold to ASCII ones could spell one. One pass over
// args; other non-ASCII text (any language's) keeps the fast path.
func mayHold(args []byte, names []string) bool {
	for _, n := range names {
		for j := 0; j < len(n); j++ {
			if n[j] >= utf8.RuneSelf {
				return true // a configured non-ASCII name: its case variants are not ASCII's
			}
		}
	}
	for i, c := range args {
		switch {
		case c == '\\':
			return true
		case c >= utf8.RuneSelf:
			if bytes.HasPrefix(args[i:], longS) || bytes.HasPrefix(args[i:], kelvin) {
				return true
			}
		case c == '"':
			for _, n := range names {
				if n != "" && hasPrefixFoldASCII(args[i+1:], n) {
					return true
				}
			}
		}
	}
	return false
}

// longS (U+017F) and kelvin (U+212A) in UTF-8: the only non-ASCII runes
// that simple Unicode folding, as strings.EqualFold does it, takes to ASCII
// letters (s and k).
var longS, kelvin = []byte("\u017f"), []byte("\u212a")

// hasPrefixFoldASCII reports whether b starts with s, ASCII letters
// compared without regard to case.
func hasPrefixFoldASCII(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	for j := 0; j < len(s); j++ {
		if lowerASCII(b[j]) != lowerASCII(s[j]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
