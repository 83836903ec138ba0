package builtin

import (
	"bytes"
	"context"
	"strings"
)

// This file implements the subset of git's ignore rules that decides
// whether a path is ignored: pattern syntax per gitignore(5) and matching per
// git's wildmatch (WM_PATHNAME). It is our own code rather than a module
// because the maintained choices either pull a large dependency tree
// (go-git's plumbing/format/gitignore) or are unmaintained with known `**`
// bugs; the rules are small, and the tests compare this code with
// `git check-ignore` itself.

// ignorePattern is one parsed line of an ignore file.
type ignorePattern struct {
	pat      string // the glob, without "!", leading "/" and trailing "/"
	negate   bool   // "!pat": re-include what an earlier pattern excluded
	dirOnly  bool   // "pat/": matches directories only
	basename bool   // no "/" in pat: match the entry's base name at any depth
	// literal is set when pat has no glob characters, so matching is a
	// plain string comparison.
	literal bool
	// prefix is the length of pat's leading part without glob characters.
	// git compares it literally and wildmatches only the rest, which
	// matters for "**": "foo**/bar" then acts like "foo/**/bar".
	prefix int
	// suffix is set for "*.ext"-style patterns (a single leading "*" and
	// no other glob character): matching is strings.HasSuffix.
	suffix string
}

// maxIgnoreStarStars bounds the "**" of one chain's patterns that hold
// more than one (see memoStars). wildmatch remembers, for such a pattern,
// its result on every way of splitting the path among them: its time and
// memory per entry grow with their number times the path's length (a
// 64 KiB line of "**/*" took 1.8 s and 200 MiB for one 79-byte path, a
// 1 MiB line tens of seconds and gigabytes), and an entry's check cannot
// be interrupted. Real patterns have one or two. A pattern that would
// take the chain past the bound is not applied; the others are.
const maxIgnoreStarStars = 64

// parseIgnore parses the contents of a .gitignore-style file, up to limit
// patterns, with the "**" budget of a whole chain.
func parseIgnore(data []byte, limit int) []ignorePattern {
	pats, _ := parseIgnoreBudget(data, limit, maxIgnoreStarStars)
	return pats
}

// parseIgnoreBudget is parseIgnore where the patterns' memoStars may add
// up to at most stars; it also returns how many they used.
func parseIgnoreBudget(data []byte, limit, stars int) ([]ignorePattern, int) {
	var out []ignorePattern
	used := 0
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM, as git skips it
	for len(data) > 0 && len(out) < limit {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if p, ok := parseIgnoreLine(string(line)); ok {
			if n := memoStars(p.pat); n > 0 {
				if used+n > stars {
					continue
				}
				used += n
			}
			out = append(out, p)
		}
	}
	return out, used
}

// memoStars is the number of "**" runs in pat when it has two or more,
// else 0: wildmatch memoizes only a pattern with a "**" followed by
// another (a "**" not between slashes counts too, which only errs on the
// side of the bound).
func memoStars(pat string) int {
	n := 0
	for i := 0; i < len(pat); i++ {
		switch {
		case pat[i] == '\\':
			i++
		case pat[i] == '*' && i+1 < len(pat) && pat[i+1] == '*':
			n++
			for i+1 < len(pat) && pat[i+1] == '*' {
				i++
			}
		}
	}
	if n < 2 {
		return 0
	}
	return n
}

func parseIgnoreLine(s string) (ignorePattern, bool) {
	s = strings.TrimSuffix(s, "\r")
	if s == "" || s[0] == '#' {
		return ignorePattern{}, false
	}
	s = trimTrailingSpaces(s)
	var p ignorePattern
	if s != "" && s[0] == '!' {
		p.negate = true
		s = s[1:]
	}
	// As in git, one trailing slash makes the pattern directory-only, and
	// a pattern with no other slash matches base names at any depth.
	if strings.HasSuffix(s, "/") {
		p.dirOnly = true
		s = s[:len(s)-1]
	}
	if s == "" {
		return ignorePattern{}, false
	}
	if !strings.Contains(s, "/") {
		p.basename = true
	} else {
		s = strings.TrimPrefix(s, "/")
	}
	p.pat = s
	p.prefix = strings.IndexAny(s, globSpecial)
	if p.prefix < 0 {
		p.prefix = len(s)
		p.literal = true
	} else if p.basename && p.prefix == 0 && s[0] == '*' && !strings.ContainsAny(s[1:], globSpecial) {
		p.suffix = s[1:]
	}
	return p, true
}

// globSpecial are the bytes that make a gitignore pattern a glob.
const globSpecial = `*?[\`

// trimTrailingSpaces removes trailing spaces unless escaped with a
// backslash, exactly as git's trim_trailing_spaces: the escaping backslash
// stays for wildmatch, which reads "\ " as a literal space.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// match reports whether p matches the entry at rel (slash path relative to
// the directory of p's ignore file) whose base name is name.
func (p *ignorePattern) match(rel, name string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	target := rel
	if p.basename {
		target = name
	}
	switch {
	case p.literal:
		return target == p.pat
	case p.suffix != "":
		return strings.HasSuffix(target, p.suffix)
	case p.basename:
		return wildmatch(p.pat, target) == wmMatch
	}
	if len(target) < p.prefix || target[:p.prefix] != p.pat[:p.prefix] {
		return false
	}
	return wildmatch(p.pat[p.prefix:], target[p.prefix:]) == wmMatch
}

// ignoreLevel is the patterns of one directory's ignore file, chained to the
// levels of its ancestors. A nil *ignoreLevel has no patterns.
type ignoreLevel struct {
	parent   *ignoreLevel
	base     string // directory of the file, relative to the workspace root ("" for the root)
	patterns []ignorePattern
	total    int // patterns of this level and its ancestors (at most maxIgnorePatterns)
	stars    int // their memoStars (at most maxIgnoreStarStars)
}

// count is the number of patterns in the chain ending at l.
func (l *ignoreLevel) count() int {
	if l == nil {
		return 0
	}
	return l.total
}

// starCount is the memoStars of the chain ending at l.
func (l *ignoreLevel) starCount() int {
	if l == nil {
		return 0
	}
	return l.stars
}

// decide returns whether rel (relative to the workspace root) is ignored
// (+1), re-included by a negation (-1) or not mentioned (0). As in git, the
// deepest file that mentions the path decides, and within a file the last
// matching line wins.
//
// When ctx ends, it stops and returns 0: one entry's check
// against a chain of costly patterns on a long path can take seconds, and
// the walk that asked stops at its next check of ctx anyway.
func (l *ignoreLevel) decide(ctx context.Context, rel, name string, isDir bool) int {
	n := 0
	for ; l != nil; l = l.parent {
		sub := rel
		if l.base != "" {
			// Entries below l.base only ever reach l (the walk builds the
			// chain along the path), so this slicing is safe.
			sub = rel[len(l.base)+1:]
		}
		for i := len(l.patterns) - 1; i >= 0; i-- {
			if n++; n%ignoreCancelCheck == 0 && ctx.Err() != nil {
				return 0
			}
			p := &l.patterns[i]
			if p.match(sub, name, isDir) {
				if p.negate {
					return -1
				}
				return 1
			}
		}
	}
	return 0
}

// ignoreRules combines the two chains ripgrep consults: .ignore files take
// precedence over .gitignore files (and .git/info/exclude) at any depth.
type ignoreRules struct {
	ignore *ignoreLevel // .ignore files
	git    *ignoreLevel // .gitignore files, .git/info/exclude
}

// ignoreCancelCheck is how many patterns decide tries between checks of
// its context: a pattern costs up to about a millisecond on a 4 KiB path.
const ignoreCancelCheck = 32

// ignored reports whether the entry at rel is excluded.
func (r ignoreRules) ignored(rel, name string, isDir bool) bool {
	return r.ignoredCtx(context.Background(), rel, name, isDir)
}

// ignoredCtx is ignored that gives up (not ignored) when ctx ends; see
// decide.
func (r ignoreRules) ignoredCtx(ctx context.Context, rel, name string, isDir bool) bool {
	if d := r.ignore.decide(ctx, rel, name, isDir); d != 0 {
		return d > 0
	}
	return r.git.decide(ctx, rel, name, isDir) > 0
}

// wildmatch results, as in git's wildmatch.c: the abort values let a failed
// inner "*" stop the outer loops early instead of trying every split.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wildmatch matches text against a gitignore glob with git's WM_PATHNAME
// semantics: "*" and "?" do not match "/", "**" between slashes (or at the
// start or end) matches any number of directories, "[...]" is a byte class
// ("!" or "^" negates, ranges, [:alpha:]-style classes), "\" escapes.
//
// Every call below the first is on a suffix of p and of text, so a
// suffix's result, known by the two lengths, is remembered once a "**"
// loop starts: without that, n "**/" on a deep path they do not match try
// every way of splitting the path among them, time exponential in n (git
// does; an ignore file comes with the workspace, whoever wrote it).
func wildmatch(p, text string) int {
	var m wildmatcher
	return m.match(p, text)
}

// wildmatcher remembers wildmatch's results on suffixes of one pattern and
// one text, by their lengths; memo is nil until a "**" needs it.
type wildmatcher struct {
	memo map[[2]int]int
}

func (m *wildmatcher) match(p, text string) int {
	if m.memo == nil {
		return m.wild(p, text)
	}
	key := [2]int{len(p), len(text)}
	if r, ok := m.memo[key]; ok {
		return r
	}
	r := m.wild(p, text)
	m.memo[key] = r
	return r
}

func (m *wildmatcher) wild(p, text string) int {
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pc := p[pi]
		if ti >= len(text) && pc != '*' {
			return wmAbortAll
		}
		switch pc {
		case '\\':
			pi++
			if pi >= len(p) {
				return wmNoMatch // a trailing backslash matches nothing, as in git
			}
			if text[ti] != p[pi] {
				return wmNoMatch
			}
		case '?':
			if text[ti] == '/' {
				return wmNoMatch
			}
		case '*':
			return m.star(p, pi, text, ti)
		case '[':
			next, ok, valid := matchClass(p, pi, text[ti])
			if !valid {
				return wmAbortAll
			}
			if !ok {
				return wmNoMatch
			}
			pi = next
		default:
			if text[ti] != pc {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// star handles a "*" or "**" at p[pi] against text[ti:].
func (m *wildmatcher) star(p string, pi int, text string, ti int) int {
	matchSlash := false
	start := pi
	pi++
	if pi < len(p) && p[pi] == '*' {
		for pi < len(p) && p[pi] == '*' {
			pi++
		}
		prevSlash := start == 0 || p[start-1] == '/'
		nextSlash := pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == '/')
		if prevSlash && nextSlash {
			// "**/" may also match zero directories. Only another "**"
			// after this one can make the tries multiply (a map per match
			// would cost every entry a pattern like "**/node_modules" meets).
			if m.memo == nil && strings.Contains(p[pi:], "**") {
				m.memo = map[[2]int]int{}
			}
			if pi < len(p) && p[pi] == '/' && m.match(p[pi+1:], text[ti:]) == wmMatch {
				return wmMatch
			}
			matchSlash = true
		}
	}
	if pi == len(p) {
		// Trailing star: matches the rest unless it holds a "/" that a
		// single star may not cross.
		if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
			return wmAbortToStarStar
		}
		return wmMatch
	}
	if !matchSlash && p[pi] == '/' {
		// "*/": the star can only end at the next slash.
		k := strings.IndexByte(text[ti:], '/')
		if k < 0 {
			return wmAbortAll
		}
		return m.match(p[pi:], text[ti+k:])
	}
	for ; ti < len(text); ti++ {
		r := m.match(p[pi:], text[ti:])
		if r != wmNoMatch {
			if !matchSlash || r != wmAbortToStarStar {
				return r
			}
		} else if !matchSlash && text[ti] == '/' {
			return wmAbortToStarStar
		}
	}
	return wmAbortAll
}

// matchClass matches byte c against the bracket expression starting at
// p[pi] == '['. It returns the index of the closing ']', whether c matched,
// and whether the expression was well formed.
func matchClass(p string, pi int, c byte) (end int, ok, valid bool) {
	i := pi + 1
	negated := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negated = true
		i++
	}
	matched := false
	var prev byte
	havePrev := false
	for first := true; ; first = false {
		if i >= len(p) {
			return 0, false, false
		}
		ch := p[i]
		if ch == ']' && !first {
			break
		}
		switch {
		case ch == '\\':
			i++
			if i >= len(p) {
				return 0, false, false
			}
			ch = p[i]
			if c == ch {
				matched = true
			}
			prev, havePrev = ch, true
		case ch == '-' && havePrev && i+1 < len(p) && p[i+1] != ']':
			i++
			hi := p[i]
			if hi == '\\' {
				i++
				if i >= len(p) {
					return 0, false, false
				}
				hi = p[i]
			}
			if prev <= c && c <= hi {
				matched = true
			}
			havePrev = false
		case ch == '[' && i+1 < len(p) && p[i+1] == ':':
			// As git: the class name runs to the first "]"; if that is
			// not preceded by ":" the "[" is an ordinary member.
			j := strings.IndexByte(p[i+2:], ']')
			if j < 0 {
				return 0, false, false
			}
			if j < 1 || p[i+2+j-1] != ':' {
				if c == ch {
					matched = true
				}
				prev, havePrev = ch, true
				break
			}
			in, known := posixClass(p[i+2:i+2+j-1], c)
			if !known {
				return 0, false, false
			}
			if in {
				matched = true
			}
			i += 2 + j
			havePrev = false
		default:
			if c == ch {
				matched = true
			}
			prev, havePrev = ch, true
		}
		i++
	}
	if c == '/' {
		// WM_PATHNAME: a class never matches a slash.
		return i, false, true
	}
	return i, matched != negated, true
}

func posixClass(name string, c byte) (in, known bool) {
	isUpper := 'A' <= c && c <= 'Z'
	isLower := 'a' <= c && c <= 'z'
	isDigit := '0' <= c && c <= '9'
	switch name {
	case "alnum":
		return isUpper || isLower || isDigit, true
	case "alpha":
		return isUpper || isLower, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return isLower, true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !isUpper && !isLower && !isDigit, true
	case "space":
		return c == ' ' || (c >= '\t' && c <= '\r'), true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F'), true
	}
	return false, false
}
