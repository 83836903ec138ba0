package builtin

import (
	"bytes"
	"context"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// refMatches is the reference semantics of a query: Go's regexp run on
// each line on its own (without the "\n"), all matches of every line.
func refMatches(re *regexp.Regexp, buf []byte) [][2]int {
	var out [][2]int
	for ls := 0; ls < len(buf); {
		le := len(buf)
		if i := bytes.IndexByte(buf[ls:], '\n'); i >= 0 {
			le = ls + i
		}
		for _, loc := range re.FindAllIndex(buf[ls:le], -1) {
			out = append(out, [2]int{ls + loc[0], ls + loc[1]})
		}
		ls = le + 1
	}
	return out
}

func scanAll(m matcher, buf []byte) [][2]int {
	var out [][2]int
	m.scan(buf, func(s, e int) bool {
		out = append(out, [2]int{s, e})
		return true
	})
	return out
}

// TestMatcherAgainstRegexp compares the fast paths and the rewritten
// regexps with Go's regexp applied line by line, on random text over an
// alphabet full of case and folding traps.
func TestMatcherAgainstRegexp(t *testing.T) {
	alphabet := []string{"a", "A", "b", "k", "K", "\u212a", "s", "S", "\u017f", "é", "É", " ", "\n", "\r", "(", "x", "ab", "Ab"}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([][]byte, 300)
	for i := range texts {
		var sb strings.Builder
		for range rng.IntN(80) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts[i] = []byte(sb.String())
	}
	literals := []string{"a", "ab", "aB", "k", "ks", "sk a", "é", "éa", "(a", "x(", "ss", " ", "ab ab", "\r"}
	regexes := []string{`a+`, `a\s*b`, `^a`, `b$`, `\Aab`, `a\z`, `[^b]+`, `.b`, `\bab\b`, `(a|k)s`, `x*`, `^`, `$`, `s[^\n]k`, `\s+`, `a\nb`, `[\n]`, `(?s).a`, `k+`, `(?i)ab`, `(?-i)ab`, `^$`, `^ *$`, `\pL*$`}
	type tcase struct {
		query       string
		isRegex, cs bool
		ref         string
	}
	var cases []tcase
	for _, l := range literals {
		cases = append(cases,
			tcase{l, false, true, regexp.QuoteMeta(l)},
			tcase{l, false, false, "(?i)" + regexp.QuoteMeta(l)})
	}
	for _, r := range regexes {
		cases = append(cases, tcase{r, true, true, r}, tcase{r, true, false, "(?i)" + r})
	}
	for _, c := range cases {
		m, err := newMatcher(context.Background(), c.query, c.isRegex, c.cs)
		if err != nil {
			t.Fatalf("newMatcher(%q): %v", c.query, err)
		}
		// Per-line reference: \A, \z and (?s) behave as ^, $ and "."
		// on a line without its "\n".
		ref := regexp.MustCompile(c.ref)
		for _, text := range texts {
			got, want := scanAll(m, text), refMatches(ref, text)
			if !slices.Equal(got, want) {
				t.Fatalf("query %q (regex %v, case-sensitive %v) on %q:\n got %v\nwant %v", c.query, c.isRegex, c.cs, text, got, want)
			}
		}
	}
}

func TestLiteralFinderRareByte(t *testing.T) {
	tests := []struct {
		pat  string
		fold bool
		rare byte
	}{
		{"func", false, 'f'},
		{"TrimLeftFunc", false, 'F'},
		{"err != nil", false, '!'},
		{"e(", true, '('}, // a case-invariant byte is preferred under fold
	}
	for _, tt := range tests {
		f := newLiteralFinder([]byte(tt.pat), tt.fold)
		if got := f.pat[f.rare]; lowerASCII[got] != lowerASCII[tt.rare] {
			t.Errorf("newLiteralFinder(%q, fold=%v) anchors on %q, want %q", tt.pat, tt.fold, got, tt.rare)
		}
	}
}

func TestRequiredLiteral(t *testing.T) {
	tests := []struct {
		expr string
		want string // "" for none
		pure bool
	}{
		{`foo`, "foo", true},
		{`foo\.bar`, "foo.bar", true},
		{`func \w+\(`, "(", false},                        // "(" ranks rarer than any byte of "func "
		{`func (\(\w+ \*?\w+\) )?New\w*\(`, "New", false}, // the rarest, not the longest
		{`err\s*!=\s*nil`, "!=", false},
		{`(foo)+bar`, "bar", false},
		{`a|b`, "", false},
		{`x*foo`, "foo", false},
		{`(?:abc){2}`, "abc", false},
		{`a\nb`, "", false}, // can never match: no prefilter needed
	}
	for _, tt := range tests {
		m, err := compileLine(context.Background(), tt.expr, true, false)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if m.pre != nil {
			got = string(m.pre.pat)
		}
		if got != tt.want || m.pure != tt.pure {
			t.Errorf("compileLine(%q): prefilter %q pure %v, want %q %v", tt.expr, got, m.pure, tt.want, tt.pure)
		}
	}
}
