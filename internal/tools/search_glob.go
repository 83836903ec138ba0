package tools

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
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

func parseGlob(s string) (*globFilter, error) {
	if s == "" {
		return nil, nil
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
		return nil, &ArgError{Msg: `"glob" has no pattern; give one like "*.go", "src/**/*.rs" or "!vendor/"`}
	}
	if g.dirOnly && !g.negate {
		return nil, &ArgError{Msg: fmt.Sprintf(`"glob" %q ends with "/" and so matches only directories, but search matches files; use %q for the files below it, or prefix "!" to exclude the directory`, s+"/", s+"/**")}
	}
	if !doublestar.ValidatePattern(s) {
		return nil, &ArgError{Msg: fmt.Sprintf(`"glob" %q is not a valid pattern (unclosed "[" or "{", or a trailing "\")`, s)}
	}
	g.pat = s
	return g, nil
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
