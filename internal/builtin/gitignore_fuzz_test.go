package builtin

import (
	"strings"
	"testing"
	"time"
)

var ignoreSeeds = []struct {
	file, path string
	dir        bool
}{
	{"*.log\n!keep.log\n", "src/deep/keep.log", false},
	{"build/\n/build\n", "build", true},
	{"doc/frotz/\n", "doc/frotz", true},
	{"foo/**/baz.txt\nfoo**/bar\n", "foo/bar/baz.txt", false},
	{"**/c\na/**\n", "a/b/c", false},
	{`\#hash` + "\n" + `a\ \ ` + "\n", "a  ", false},
	{"[[:digit:]]*.txt\n[!a-c]?\n[]]\n[abc\n", "7.txt", false},
	{"\xef\xbb\xbf*.txt\r\n#c\n!\n/\n", "x.txt", false},
	{"a\\", "a", false},
	{"**/**/**/**/**/**/**/**/**/**/x\n", "a/b/c/d/e/f/g/h/i/j/k/l/y", false},
	{"*a*a*a*a*a*a*a*a*a*a*a*b\n", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	{"a/**/b/**/c/**/d/**/e\n", "a/b/b/b/c/c/c/d/d/d/e/x", false},
}

func TestIgnoreProperties(t *testing.T) {
	for _, s := range ignoreSeeds {
		checkIgnore(t, []byte(s.file), s.path, s.dir)
	}
}

// Whatever the ignore file, parsing and matching do not panic and are
// quick, and a pattern's shortcuts (a literal, a "*.ext" suffix) decide as
// wildmatch does.
func FuzzIgnore(f *testing.F) {
	for _, s := range ignoreSeeds {
		f.Add([]byte(s.file), s.path, s.dir)
	}
	f.Fuzz(checkIgnore)
}

func checkIgnore(t *testing.T, file []byte, path string, isDir bool) {
	t.Helper()
	if path == "" || strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || strings.Contains(path, "//") {
		return // not a path relative to the ignore file's directory
	}
	name := path[strings.LastIndexByte(path, '/')+1:]
	check := func() time.Duration {
		start := time.Now()
		pats := parseIgnore(file, maxIgnorePatterns)
		for i := range pats {
			p := &pats[i]
			got := p.match(path, name, isDir)
			target := path
			if p.basename {
				target = name
			}
			// As git does, a path pattern's literal prefix is compared and
			// only the rest wildmatched ("foo**/bar" acts as "foo/**/bar").
			pre := 0
			if !p.basename {
				pre = strings.IndexAny(p.pat, globSpecial)
				if pre < 0 {
					pre = len(p.pat)
				}
			}
			want := (!p.dirOnly || isDir) && strings.HasPrefix(target, p.pat[:pre]) && wildmatch(p.pat[pre:], target[pre:]) == wmMatch
			if got != want {
				t.Fatalf("pattern %q (%+v) on %q (dir %v): match %v, wildmatch of the whole pattern %v", p.pat, *p, path, isDir, got, want)
			}
		}
		level := &ignoreLevel{patterns: pats, total: len(pats)}
		ignoreRules{git: level}.ignored(path, name, isDir)
		return time.Since(start)
	}
	if d := check(); len(file)+len(path) <= 64<<10 && d > 100*time.Millisecond {
		// A stall of the machine (another fuzz worker, a loaded CI runner)
		// passes; slow code is slow again.
		if again := check(); again > 100*time.Millisecond {
			t.Errorf("%d bytes of patterns on a %d-byte path took %v, and %v again", len(file), len(path), d, again)
		}
	}
}

// TestWildmatchStarStarBounded: an ignore file comes with the workspace,
// whoever wrote it. Patterns of many "**/" on a deep path that they do not
// match made wildmatch try every way of splitting the path among them
// (time exponential in their number); it must stay quick.
func TestWildmatchStarStarBounded(t *testing.T) {
	deep := strings.Repeat("a/", 200) + "y"
	for _, tc := range []struct {
		pat, text string
		want      bool
	}{
		{strings.Repeat("**/", 30) + "x", deep, false},
		{strings.Repeat("**/", 30) + "y", deep, true},
		{"a" + strings.Repeat("/**/a", 30) + "/b", deep, false},
		{"a" + strings.Repeat("/**/a", 30) + "/y", deep, true},
		{strings.Repeat("**/a/", 30) + "b", strings.Repeat("a/", 1000) + "y", false},
		{strings.Repeat("**/a*", 30) + "b", strings.Repeat("a/", 1000) + "y", false},
		{strings.Repeat("a**/", 30) + "b", strings.Repeat("a/", 1000) + "y", false},
	} {
		start := time.Now()
		got := wildmatch(tc.pat, tc.text) == wmMatch
		if d := time.Since(start); d > time.Second {
			t.Errorf("wildmatch(%.40q…, %d bytes) took %v", tc.pat, len(tc.text), d)
		}
		if got != tc.want {
			t.Errorf("wildmatch(%q, %q) = %v, want %v", tc.pat, tc.text, got, tc.want)
		}
	}
}
