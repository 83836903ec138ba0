package builtin

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"

	"github.com/clawde/clawd/internal/tools"
)

// A matcher finds the matches of one query in a file's contents. Matches
// never span a line break: a file is a sequence of lines, as for ripgrep
// without --multiline.
type matcher interface {
	// scan calls fn(start, end) for each match in buf, leftmost first and
	// non-overlapping; fn returns false to stop early.
	scan(buf []byte, fn func(start, end int) bool)
}

// The two non-ASCII runes whose simple case folding reaches an ASCII
// letter: KELVIN SIGN folds with k/K, LATIN SMALL LETTER LONG S with s/S.
// Go's regexp (?i) honours them, so the ASCII fast path must too.
var (
	kelvinSign = []byte("\u212a")
	longS      = []byte("\u017f")
)

// newMatcher builds the matcher for a query. Literal queries get the byte
// search fast paths; regexes are rewritten to line semantics (see
// lineRegexp) and prefiltered by a literal every match must contain.
// ctx, when done, stops a regexp scan within a file, between calls of the
// regexp engine (search_bounds.go bounds the work of each); a literal
// scan's callers check it between matches.
func newMatcher(ctx context.Context, query string, isRegex, caseSensitive bool) (matcher, error) {
	if !isRegex {
		if i := bytes.IndexAny([]byte(query), "\n"); i >= 0 {
			return nil, &tools.ArgError{Msg: `"query" contains a line break; search matches within single lines (for a line end use is_regex with "$")`}
		}
		if caseSensitive {
			return newLiteralFinder([]byte(query), false), nil
		}
		if isASCII(query) {
			lf := newLiteralFinder([]byte(query), true)
			if !lf.needsUnicodeFold() {
				return lf, nil
			}
			// Slow path for the rare file that holds a KELVIN SIGN or LONG S.
			re, err := compileLine(ctx, regexp.QuoteMeta(query), false, true)
			if err != nil {
				return nil, err
			}
			return &foldWithFallback{fast: lf, slow: re}, nil
		}
		// Non-ASCII case-insensitive literal: Unicode folding via regexp.
		m, err := compileLine(ctx, regexp.QuoteMeta(query), false, true)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	m, err := compileLine(ctx, query, caseSensitive, false)
	if err != nil {
		return nil, err
	}
	if m.pure && m.pre != nil {
		// The expression is a plain literal (e.g. `foo\.bar`): byte search.
		if m.pre.needsUnicodeFold() {
			return &foldWithFallback{fast: m.pre, slow: m}, nil
		}
		return m.pre, nil
	}
	return m, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// literalFinder searches for a fixed byte string, optionally ignoring ASCII
// case. It anchors on the pattern's rarest byte (by a frequency table of
// source code), so most positions are skipped by IndexByte, which is
// vectorised; case-insensitive search follows both cases of that byte.
type literalFinder struct {
	pat    []byte // the pattern; lower-cased when fold
	fold   bool
	rare   int  // offset of the anchor byte in pat
	lo, up byte // the anchor byte in both cases (equal unless a letter under fold)
}

func newLiteralFinder(pat []byte, fold bool) *literalFinder {
	f := &literalFinder{pat: pat, fold: fold}
	if fold {
		f.pat = bytes.Clone(pat)
		for i, c := range f.pat {
			f.pat[i] = lowerASCII[c]
		}
	}
	best := -1
	bestRank := 1 << 30
	for i, c := range f.pat {
		r := int(byteRank[c])
		if fold && lowerASCII[c] != upperASCII[c] {
			r += int(byteRank[upperASCII[c]])
		}
		if r < bestRank {
			best, bestRank = i, r
		}
	}
	if best >= 0 {
		f.rare = best
		f.lo = f.pat[best]
		f.up = f.lo
		if fold {
			f.up = upperASCII[f.lo]
		}
	}
	return f
}

// anchorRank is how common the anchor byte is (lower is rarer), counting
// both cases under fold: the prefilter picks the literal with the rarest.
func (f *literalFinder) anchorRank() int {
	if len(f.pat) == 0 {
		return 1 << 30
	}
	r := int(byteRank[f.lo])
	if f.up != f.lo {
		r += int(byteRank[f.up])
	}
	return r
}

// needsUnicodeFold reports whether a case-insensitive pattern holds a letter
// that also folds to a non-ASCII rune (k, s).
func (f *literalFinder) needsUnicodeFold() bool {
	return f.fold && bytes.ContainsAny(f.pat, "ks")
}

func (f *literalFinder) scan(buf []byte, fn func(start, end int) bool) {
	n := len(f.pat)
	if n == 0 {
		return
	}
	it := f.iter(buf)
	for from := 0; ; {
		s := it.next(from)
		if s < 0 {
			return
		}
		if !fn(s, s+n) {
			return
		}
		from = s + n
	}
}

// litIter walks the occurrences of a literalFinder's pattern in one buffer.
// It remembers the next position of each case of the anchor byte, so a rare
// case is not searched for again on every candidate of the common one.
type litIter struct {
	f        *literalFinder
	buf      []byte
	pLo, pUp int // next known anchor positions (-1: unknown, len(buf): none)
	fails    int // candidates of a case-sensitive anchor that did not match
	// index switches a case-sensitive search to bytes.Index, which after
	// memchr on the first byte falls back to a vectorised compare of the
	// whole needle: better when the anchor is the first byte anyway, or
	// when it turns out common in this buffer.
	index bool
}

func (f *literalFinder) iter(buf []byte) litIter {
	return litIter{f: f, buf: buf, pLo: -1, pUp: -1, index: !f.fold && f.rare == 0}
}

// next returns the start of the first occurrence at or after from, or -1.
func (it *litIter) next(from int) int {
	f, buf := it.f, it.buf
	n := len(f.pat)
	if it.index {
		if from > len(buf) {
			return -1
		}
		j := bytes.Index(buf[from:], f.pat)
		if j < 0 {
			return -1
		}
		return from + j
	}
	last := len(buf) - n + f.rare // the last anchor position that fits a match
	for a := from + f.rare; a <= last; {
		if it.pLo < a {
			it.pLo = indexByteFrom(buf, f.lo, a)
		}
		p := it.pLo
		if f.up != f.lo {
			if it.pUp < a {
				it.pUp = indexByteFrom(buf, f.up, a)
			}
			p = min(p, it.pUp)
		}
		if p > last {
			return -1
		}
		s := p - f.rare
		if f.fold {
			if equalFoldASCII(buf[s:s+n], f.pat) {
				return s
			}
		} else {
			if string(buf[s:s+n]) == string(f.pat) {
				return s
			}
			// No match starts before s+1 (each would have an anchor
			// byte before p), so bytes.Index may take over from there.
			if it.fails++; it.fails > 8+p>>5 {
				it.index = true
				return it.next(s + 1)
			}
		}
		a = p + 1
	}
	return -1
}

// indexByteFrom returns the index of the first c in buf at or after from,
// or len(buf).
func indexByteFrom(buf []byte, c byte, from int) int {
	if from >= len(buf) {
		return len(buf)
	}
	j := bytes.IndexByte(buf[from:], c)
	if j < 0 {
		return len(buf)
	}
	return from + j
}

// equalFoldASCII reports whether b equals the lower-case ASCII pattern lp
// ignoring ASCII case.
func equalFoldASCII(b, lp []byte) bool {
	for i, c := range lp {
		if lowerASCII[b[i]] != c {
			return false
		}
	}
	return true
}

var lowerASCII, upperASCII [256]byte

func init() {
	for i := range 256 {
		c := byte(i)
		lowerASCII[i], upperASCII[i] = c, c
		if 'A' <= c && c <= 'Z' {
			lowerASCII[i] = c + 'a' - 'A'
		}
		if 'a' <= c && c <= 'z' {
			upperASCII[i] = c - ('a' - 'A')
		}
	}
}

// foldWithFallback is a case-insensitive ASCII literal holding k or s: the
// fast path serves every file that contains neither KELVIN SIGN nor LONG S,
// the regexp the rest, so results equal Go's (?i) everywhere.
type foldWithFallback struct {
	fast *literalFinder
	slow *lineRegexp
}

func (m *foldWithFallback) scan(buf []byte, fn func(start, end int) bool) {
	if bytes.Contains(buf, kelvinSign) || bytes.Contains(buf, longS) {
		m.slow.scan(buf, fn)
		return
	}
	m.fast.scan(buf, fn)
}

// lineRegexp is a Go (RE2) regexp with line semantics: the expression is
// rewritten so that it cannot match a line break ("." and classes exclude
// "\n", a literal "\n" never matches) and so that ^, $, \A and \z anchor
// at line boundaries. It is matched against whole lines (a line start is a
// valid place to begin matching, so the context of \b and ^ is right).
type lineRegexp struct {
	re *regexp.Regexp
	// pre, when set, is a literal every match contains: lines without it
	// are skipped without running the regexp.
	pre *literalFinder
	// pure is set when the whole expression is the literal pre.
	pure bool
	ctx  context.Context
	// insts is the size of the compiled program, which bounds the work
	// per byte; window is the most bytes of a line handed to the regexp
	// in one call (see search_bounds.go).
	insts  int
	window int
}

// compileLine parses a regexp and builds its line matcher. A literal
// expression (no operators after parsing) becomes a literalFinder.
//
// literal marks the regexp of a literal query (Unicode case folding): its
// size follows from the query's, already capped, so it is not refused for
// it; its windows are sized by it all the same.
func compileLine(ctx context.Context, expr string, caseSensitive, literal bool) (*lineRegexp, error) {
	flags := syntax.Perl
	if !caseSensitive {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(expr, flags)
	if err != nil {
		return nil, &tools.ToolError{Msg: fmt.Sprintf("invalid regular expression %q: %v (the syntax is Go's RE2; set is_regex to false to search for the text literally)", clipQuery(expr), clipQuery(describeRegexError(err)))}
	}
	// The rewrite is done on the tree as parsed, whose text regexp.Compile
	// parses again: the simplified tree spells out counted repetitions,
	// and its text can be too large or too deeply nested to parse back.
	tree = toLineSemantics(tree)
	simple := tree.Simplify()
	insts, err := programSize(expr, simple, literal)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, &tools.ToolError{Msg: fmt.Sprintf("invalid regular expression %q: %v", clipQuery(expr), clipQuery(err.Error()))}
	}
	m := &lineRegexp{re: re, ctx: ctx, insts: insts, window: regexWindow(insts)}
	for _, c := range requiredLiterals(simple, nil) {
		b := []byte(string(c.lit))
		if c.fold && !isASCII(string(b)) {
			continue // non-ASCII folding has no byte fast path
		}
		f := newLiteralFinder(b, c.fold)
		if m.pre == nil || f.anchorRank() < m.pre.anchorRank() ||
			(f.anchorRank() == m.pre.anchorRank() && len(f.pat) > len(m.pre.pat)) {
			m.pre = f
		}
	}
	m.pure = m.pre != nil && simple.Op == syntax.OpLiteral
	return m, nil
}

func describeRegexError(err error) string {
	if e, ok := err.(*syntax.Error); ok {
		return fmt.Sprintf("%s in %q", e.Code, e.Expr)
	}
	return err.Error()
}

// toLineSemantics rewrites a parsed regexp in place so that no match can
// contain "\n" and text anchors become line anchors.
func toLineSemantics(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
		re.Flags &^= syntax.WasDollar
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return &syntax.Regexp{Op: syntax.OpNoMatch}
			}
		}
	case syntax.OpCharClass:
		re.Rune = removeNewline(re.Rune)
		if len(re.Rune) == 0 {
			return &syntax.Regexp{Op: syntax.OpNoMatch}
		}
	}
	for i, sub := range re.Sub {
		re.Sub[i] = toLineSemantics(sub)
	}
	return re
}

// removeNewline removes '\n' from a sorted list of rune ranges.
func removeNewline(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= '\n' && '\n' <= hi {
			if lo < '\n' {
				out = append(out, lo, '\n'-1)
			}
			if hi > '\n' {
				out = append(out, '\n'+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

type literalCandidate struct {
	lit  []rune
	fold bool
}

// requiredLiterals appends to out the literals that every match of re
// contains: re itself if it is a literal, else those of the parts of its
// top-level concatenation that must occur at least once.
func requiredLiterals(re *syntax.Regexp, out []literalCandidate) []literalCandidate {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) > 0 {
			out = append(out, literalCandidate{re.Rune, re.Flags&syntax.FoldCase != 0})
		}
	case syntax.OpCapture, syntax.OpPlus:
		out = requiredLiterals(re.Sub[0], out)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			out = requiredLiterals(re.Sub[0], out)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			out = requiredLiterals(sub, out)
		}
	}
	return out
}

// lineBounds returns the line [ls, le) of buf that holds position p, where
// floor is a known line start at or before p; le excludes the "\n".
func lineBounds(buf []byte, floor, p int) (ls, le int) {
	ls = floor
	if p > floor {
		if i := bytes.LastIndexByte(buf[floor:p], '\n'); i >= 0 {
			ls = floor + i + 1
		}
	}
	le = len(buf)
	if p < len(buf) {
		if i := bytes.IndexByte(buf[p:], '\n'); i >= 0 {
			le = p + i
		}
	}
	return ls, le
}
