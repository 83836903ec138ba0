package builtin

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// globFilter is search's "glob" argument, with ripgrep -g semantics:
//   - a pattern without "/" matches the base name at any depth ("*.rs"
//     matches src/main.rs); with a "/" (a leading one just anchors) it
//     matches the path relative to the search root; "**" spans
//     directories and {a,b} is alternation (doublestar syntax);
//   - a pattern that starts with "!" excludes what it matches, files and
//     directories alike (a directory that matches is not entered);
//   - a trailing "/" restricts the pattern to directories, which makes
//     sense only negated ("!vendor/").
//
// Unlike ripgrep, the glob never re-includes a file that an ignore file
// excludes: it only narrows the search.
type globFilter struct {
	pat     string
	negate  bool
	dirOnly bool
	path    bool // match the search-root-relative path, not the base name
}

// maxGlobAlternatives caps the product of the {a,b,...} groups' sizes:
// doublestar tries the combinations one by one, so ten groups of {a,aa}
// already take milliseconds per file name, and each more doubles it.
const maxGlobAlternatives = 256

// maxGlobWork caps the combinations times the glob's length: what the
// braces would expand to, as separate patterns. Matching one combination
// against a path costs up to about the pattern's length times the path's
// (a "*" followed by a long literal is tried at every start in every
// directory name that "**/" reaches), and a name's match cannot be
// interrupted: 256 combinations of a 225-byte glob took 0.5 s per 4 KiB
// path. Within this cap one name costs at most tens of milliseconds.
const maxGlobWork = 4096

func parseGlob(s string) (*globFilter, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > sandbox.MaxPathBytes {
		return nil, &tools.ArgError{Msg: fmt.Sprintf(`"glob" is %d bytes; the limit is %d bytes (PATH_MAX)`, len(s), sandbox.MaxPathBytes)}
	}
	n := globAlternatives(s)
	if n > maxGlobAlternatives {
		return nil, &tools.ArgError{Msg: fmt.Sprintf(`"glob" has too many {a,b} alternatives (%d combinations; the limit is %d), which makes matching slow; use fewer groups`, n, maxGlobAlternatives)}
	}
	if n*len(s) > maxGlobWork {
		return nil, &tools.ArgError{Msg: fmt.Sprintf(`"glob" expands to %d combinations of up to %d bytes, which makes matching each path slow; `+
			`combinations times length may be at most %d: use fewer or shorter {a,b} groups`, n, len(s), maxGlobWork)}
	}
	g := &globFilter{}
	if s[0] == '!' {
		g.negate = true
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		g.dirOnly = true
		s = strings.TrimRight(s, "/")
	}
	if strings.HasPrefix(s, "/") {
		g.path = true
		s = strings.TrimLeft(s, "/")
	}
	if strings.Contains(s, "/") {
		g.path = true
	}
	if s == "" {
		return nil, &tools.ArgError{Msg: `"glob" has no pattern; give one like "*.go", "src/**/*.rs" or "!vendor/"`}
	}
	if g.dirOnly && !g.negate {
		return nil, &tools.ArgError{Msg: fmt.Sprintf(`"glob" %q ends with "/" and so matches only directories, but search matches files; use %q for the files below it, or prefix "!" to exclude the directory`, s+"/", s+"/**")}
	}
	if !doublestar.ValidatePattern(s) {
		return nil, &tools.ArgError{Msg: fmt.Sprintf(`"glob" %q is not a valid pattern (unclosed "[" or "{", or a trailing "\")`, s)}
	}
	g.pat = s
	return g, nil
}

// globAlternatives is the product of the sizes of s's brace groups, an
// upper bound of the combinations matching may try (saturating above
// maxGlobAlternatives).
func globAlternatives(s string) int {
	var sizes []int // open groups' sizes, innermost last
	total := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			sizes = append(sizes, 1)
		case ',':
			if len(sizes) > 0 {
				sizes[len(sizes)-1]++
			}
		case '}':
			if len(sizes) > 0 {
				total = min(total*sizes[len(sizes)-1], maxGlobAlternatives+1)
				sizes = sizes[:len(sizes)-1]
			}
		}
	}
	return total
}

func (g *globFilter) matches(rel, name string) bool {
	target := name
	if g.path {
		target = rel
	}
	ok, err := doublestar.Match(g.pat, target)
	return ok && err == nil
}

// allowFile reports whether a file passes the filter; rel is its path
// relative to the search root.
func (g *globFilter) allowFile(rel, name string) bool {
	if g == nil {
		return true
	}
	if g.dirOnly {
		return true // only negated directory patterns exist
	}
	return g.matches(rel, name) != g.negate
}

// allowDir reports whether the walk enters a directory: only a negated
// pattern can exclude one.
func (g *globFilter) allowDir(rel, name string) bool {
	if g == nil || !g.negate {
		return true
	}
	return !g.matches(rel, name)
}
