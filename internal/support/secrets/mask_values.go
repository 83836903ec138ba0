package secrets

import (
	"strings"
)

// discordSpans adds to spans each Discord bot token: the base64 of a
// numeric user id (24 to 26 characters, starting M, N or O and then D, T,
// j or z, as the base64 of ASCII digits does), '.', 6 characters (a
// timestamp), '.', and 27 or more (an HMAC), each of [A-Za-z0-9_-]. Its
// three words are too short for the random-word rule. Each '.' looks back
// at most 27 bytes, and forward over a run no later '.' reads again:
// linear.
func discordSpans(s string, spans [][2]int) [][2]int {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '.')
		if i < 0 {
			return spans
		}
		dot := off + i
		off = dot + 1
		if dot+8 > len(s) || s[dot+7] != '.' || tokenRun(s[dot+1:dot+7]) != 6 {
			continue
		}
		n := 0
		for n < 27 && dot-n > 0 && isNameByte(s[dot-n-1]) {
			n++
		}
		if n < 24 || n > 26 || !strings.ContainsRune("MNO", rune(s[dot-n])) || !strings.ContainsRune("DTjz", rune(s[dot-n+1])) {
			continue
		}
		m := tokenRun(s[dot+8:])
		if m < 27 {
			continue
		}
		spans = append(spans, [2]int{dot - n, dot + 8 + m})
		off = dot + 8 + m
	}
}

// tokenRun is the length of the run of [A-Za-z0-9_-] s starts with.
func tokenRun(s string) int {
	n := 0
	for n < len(s) && isNameByte(s[n]) {
		n++
	}
	return n
}

// passSpans adds to spans the value after a lower-case name_pass,
// name-pass or name_pw, a camelCase namePass, or pass alone, then an
// optional quote (a JSON or YAML key), then = or : (name_pass="x",
// smtp_pass: x, dbPass: 'x', ?pass=x), and after --pass or --name-pass
// and a blank (--db-pass x), except where the name or the value reads as
// code or prose:
//
//   - pass alone, not quoted, before ':' ("tests pass: 3"; openssl's
//     pass:X is the pass: rule's), and a camelCase namePass with a value
//     that is not quoted, unless after a bare '=' (a type, renderPass:
//     GPURenderPassEncoder, or code, shadowPass = new ShadowPass());
//   - a value that is a reference ($DB_PASS, "${DB_PASS}", %PASS%,
//     {{ .pass }}), a call or an index (make_pass(cfg), a[i]), a number
//     (first_pass=0), a literal (true, None, null), a type after ':'
//     (int, str), or a dotted name (self.config.x_pass).
//
// It looks at each "ass" and "pw" in s, a few bytes around it and the
// value after it (no regular expression: this runs on every text that
// holds "pass") and goes on after the value; a flag's name is looked back
// at over 64 bytes at most: linear.
func passSpans(s string, spans [][2]int) [][2]int {
	for _, suffix := range []string{"ass", "pw"} {
		for off := 0; ; {
			i := strings.Index(s[off:], suffix)
			if i < 0 {
				break
			}
			p := off + i // the name's 'p' or 'P'
			if suffix == "ass" {
				p--
			}
			end := off + i + len(suffix)
			off = end
			if p < 0 {
				continue
			}
			var prev byte
			if p > 0 {
				prev = s[p-1]
			}
			var bare, camel, snake bool
			switch {
			case s[p] == 'P' && suffix == "ass":
				camel = prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'
			case s[p] == 'p':
				snake = prev == '_' || prev == '-'
				bare = suffix == "ass" && !isNameByte(prev)
			}
			if !bare && !camel && !snake {
				continue
			}
			if v, ok := flagValue(s, p, end); ok && suffix == "ass" {
				if !codeValue(s[v[0]:v[1]], false) {
					spans = append(spans, v)
				}
				off = v[1]
				continue
			}
			j := end
			quotedName := j < len(s) && (s[j] == '"' || s[j] == '\'')
			if quotedName {
				j++
			}
			k := j
			for k < len(s) && isBlank(s[k]) {
				k++
			}
			var sep string
			switch {
			case k < len(s) && s[k] == '=':
				k++
				for k < len(s) && isBlank(s[k]) {
					k++
				}
				sep = s[j:k]
			case j < len(s) && s[j] == ':':
				k = j + 1
				for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
					k++
				}
				sep = ":"
			default:
				continue
			}
			v, ok := assignedValue(s, k)
			if !ok {
				continue
			}
			// The search goes on after the value, read once.
			off = v[1]
			val := s[v[0]:v[1]]
			colon := sep == ":"
			quoted := val[0] == '"' || val[0] == '\''
			if colon && bare && !quotedName || camel && !quoted && sep != "=" || codeValue(val, colon) {
				continue
			}
			spans = append(spans, v)
		}
	}
	return spans
}

// flagValue is the value after --pass or --name-pass (its name runs from
// p, back to "--" at the text's start or after a blank, to end) and a
// blank: a quoted string, or a word that does not start with '-'.
func flagValue(s string, p, end int) ([2]int, bool) {
	b := p
	for b > 0 && p-b < 64 && (s[b-1] >= 'a' && s[b-1] <= 'z' || s[b-1] >= '0' && s[b-1] <= '9' || s[b-1] == '-') {
		b--
	}
	if !strings.HasPrefix(s[b:], "--") || b > 0 && !isBlank(s[b-1]) || strings.HasPrefix(s[b+2:], "-") || b+2 < p && s[p-1] != '-' {
		return [2]int{}, false
	}
	k := end
	for k < len(s) && isBlank(s[k]) {
		k++
	}
	if k == end || k == len(s) {
		return [2]int{}, false
	}
	if q := s[k]; q == '"' || q == '\'' {
		if c := strings.IndexByte(s[k+1:], q); c >= 0 {
			return [2]int{k, k + c + 2}, true
		}
		return [2]int{}, false
	}
	if strings.IndexByte("-;&|", s[k]) >= 0 {
		return [2]int{}, false
	}
	return [2]int{k, wordEnd(s, k)}, true
}

// assignedValue is the value at s[k:] after a name and its = or :, as
// secretAssign reads one: a quoted string to its closing quote, or a run
// up to a blank, ; & or |, without the quotes it ends with.
func assignedValue(s string, k int) ([2]int, bool) {
	if k == len(s) {
		return [2]int{}, false
	}
	if q := s[k]; q == '"' || q == '\'' {
		if c := strings.IndexByte(s[k+1:], q); c >= 0 {
			return [2]int{k, k + c + 2}, true
		}
	}
	e := wordEnd(s, k)
	for e > k && (s[e-1] == '"' || s[e-1] == '\'') {
		e--
	}
	return [2]int{k, e}, e > k
}

// wordEnd is where the unquoted value at s[k:] ends: a blank, ; & | or
// the text's end.
func wordEnd(s string, k int) int {
	e := k
	for e < len(s) && !isBlank(s[e]) && strings.IndexByte(";&|", s[e]) < 0 {
		e++
	}
	return e
}

// codeValue: v, a value after a name_pass, is code rather than a
// password (passSpans); typed: it came after ':', where a type may be.
func codeValue(v string, typed bool) bool {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		v = v[1 : len(v)-1]
		return v == "" || v[0] == '$' || v[0] == '%' && strings.HasSuffix(v, "%") || strings.HasPrefix(v, "{{")
	}
	switch {
	case v == "", strings.ContainsAny(v[:1], "$%{([<"), strings.ContainsAny(v, "()[]"),
		strings.Trim(v, "0123456789.:+-/") == "":
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "none", "null", "nil", "undefined", "yes", "no", "on", "off":
		return true
	case "int", "str", "bool", "float", "string", "number", "boolean", "bytes", "any", "object":
		return typed
	}
	// A dotted name: words of letters, digits and '_' that start with a
	// letter or '_', two or more.
	words := strings.Split(v, ".")
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		if w == "" || w[0] >= '0' && w[0] <= '9' || tokenRun(w) != len(w) || strings.Contains(w, "-") {
			return false
		}
	}
	return true
}
