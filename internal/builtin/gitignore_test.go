package builtin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

func TestWildmatch(t *testing.T) {
	tests := []struct {
		pat, text string
		want      bool
	}{
		{"foo", "foo", true},
		{"foo", "foobar", false},
		{"*.go", "a.go", true},
		{"*.go", "a/b.go", false}, // "*" stops at "/"
		{"a/*.go", "a/b.go", true},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/x/c", false},
		{"a/**/c", "a/c", true}, // "**/" matches zero directories
		{"a/**/c", "a/b/x/c", true},
		{"**/c", "c", true},
		{"**/c", "a/b/c", true},
		{"a/**", "a/b", true},
		{"a/**", "a/b/c", true},
		{"a/**", "a", false}, // the contents, not the directory itself
		{"a**b", "axxb", true},
		{"a**b", "ax/xb", false}, // "**" not between slashes is "*"
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"a?b", "a/b", false},
		{"[ab].txt", "b.txt", true},
		{"[!ab].txt", "b.txt", false},
		{"[^ab].txt", "c.txt", true},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[]]", "]", true},
		{"[!]]", "a", true},
		{"[[:digit:]]x", "7x", true},
		{"[[:alpha:]]x", "7x", false},
		{"[[:bogus:]]x", "7x", false},
		{"a[/]b", "a/b", false}, // a class never matches "/"
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`a\ `, "a ", true},
		{"[abc", "a", false}, // unterminated class matches nothing
		{"*", "", true},
		{"x*y*z", "xaybz", true},
		{"x*y*z", "xaybzq", false},
	}
	for _, tt := range tests {
		if got := wildmatch(tt.pat, tt.text) == wmMatch; got != tt.want {
			t.Errorf("wildmatch(%q, %q) = %v, want %v", tt.pat, tt.text, got, tt.want)
		}
	}
}

func TestParseIgnoreLine(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		want ignorePattern
	}{
		{"", false, ignorePattern{}},
		{"# comment", false, ignorePattern{}},
		{`\#hash`, true, ignorePattern{pat: `\#hash`, basename: true}},
		{"!keep.log", true, ignorePattern{pat: "keep.log", negate: true, basename: true, literal: true, prefix: 8}},
		{"build/", true, ignorePattern{pat: "build", dirOnly: true, basename: true, literal: true, prefix: 5}},
		{"/build", true, ignorePattern{pat: "build", literal: true, prefix: 5}},
		{"doc/frotz/", true, ignorePattern{pat: "doc/frotz", dirOnly: true, literal: true, prefix: 9}},
		{"*.log  ", true, ignorePattern{pat: "*.log", basename: true, suffix: ".log"}},
		{`a\ \ `, true, ignorePattern{pat: `a\ \ `, basename: true, prefix: 1}},
		{"x\r", true, ignorePattern{pat: "x", basename: true, literal: true, prefix: 1}},
		{"/", false, ignorePattern{}},
		{"!", false, ignorePattern{}},
	}
	for _, tt := range tests {
		got, ok := parseIgnoreLine(tt.line)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseIgnoreLine(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// gitTreeFiles are the files of the tree the git comparison runs on.
var gitTreeFiles = []string{
	"a.txt", "a.log", "b.md", "c.txt", "sp ace.txt", "#hash.txt", "!bang.txt",
	"build/x.txt", "build/y.log",
	"src/a.txt", "src/b.txt", "src/build/z.txt", "src/deep/a.log", "src/deep/keep.log", "src/deep/more/m.txt",
	"doc/frotz/f.txt", "x/doc/frotz/g.txt", "x/frotz/h.txt",
	"foo/bar/baz.txt", "foo/qux.txt", "foox/bar/q.txt",
	"abc/keep.txt", "abc/other.txt", "abc/sub/keep.txt",
	".hidden/h.txt", ".dot.txt",
	"7.txt",
}

// TestIgnoreMatchesGit builds one tree per set of ignore files and checks
// that search visits exactly the files that git reports as untracked and
// not ignored (git ls-files --others --exclude-standard).
func TestIgnoreMatchesGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	tests := []struct {
		name    string
		ignores map[string]string // ignore file path -> content
	}{
		{"suffix", map[string]string{".gitignore": "*.log\n"}},
		{"negation", map[string]string{".gitignore": "*.log\n!keep.log\n"}},
		{"dir only", map[string]string{".gitignore": "build/\n"}},
		{"anchored", map[string]string{".gitignore": "/build\n"}},
		{"any depth name", map[string]string{".gitignore": "build\n"}},
		{"anchored path dir", map[string]string{".gitignore": "doc/frotz/\n"}},
		{"leading starstar", map[string]string{".gitignore": "**/frotz\n"}},
		{"starstar middle", map[string]string{".gitignore": "src/**/*.log\n"}},
		{"trailing starstar re-include", map[string]string{".gitignore": "abc/**\n!abc/keep.txt\n"}},
		{"excluded dir cannot re-include", map[string]string{".gitignore": "abc/\n!abc/keep.txt\n"}},
		{"whitelist", map[string]string{".gitignore": "*\n!*/\n!*.txt\n"}},
		{"classes", map[string]string{".gitignore": "[ab].txt\n[!s]*.md\n[[:digit:]].txt\n"}},
		{"question mark", map[string]string{".gitignore": "?.txt\n"}},
		{"escapes", map[string]string{".gitignore": "\\#hash.txt\n\\!bang.txt\nsp\\ ace.txt\n"}},
		{"trailing spaces", map[string]string{".gitignore": "a.txt   \nc.txt\\ \n"}},
		{"star slash", map[string]string{".gitignore": "*/frotz\nfo*/bar/*.txt\n"}},
		{"starstar glued to prefix", map[string]string{".gitignore": "foo**/baz.txt\n"}},
		{"hidden", map[string]string{".gitignore": ".*\n!.gitignore\n"}},
		{"nested overrides", map[string]string{".gitignore": "*.txt\n", "src/.gitignore": "!a.txt\n"}},
		{"nested anchored", map[string]string{"src/.gitignore": "/build\n/deep/more\n"}},
		{"nested dir pattern", map[string]string{"src/.gitignore": "deep/\n", ".gitignore": "!src/deep/\n"}},
		{"info exclude", map[string]string{".git/info/exclude": "*.md\nbuild/\n"}},
		{"gitignore beats exclude", map[string]string{".git/info/exclude": "*.md\n", ".gitignore": "!b.md\n"}},
		{"crlf", map[string]string{".gitignore": "*.log\r\nb.md\r\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range gitTreeFiles {
				writeTreeFile(t, dir, f, "x\n")
			}
			env := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1")
			run := func(args ...string) string {
				cmd := exec.Command(git, args...)
				cmd.Dir = dir
				cmd.Env = env
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("git %v: %v", args, err)
				}
				return string(out)
			}
			run("init", "-q")
			for p, c := range tt.ignores {
				writeTreeFile(t, dir, p, c)
			}
			var want []string
			for _, f := range strings.Split(run("ls-files", "--others", "--exclude-standard", "-z"), "\x00") {
				if f != "" && slices.Contains(gitTreeFiles, f) {
					want = append(want, f)
				}
			}
			slices.Sort(want)
			got := searchedFiles(t, dir, "")
			if !slices.Equal(got, want) {
				t.Errorf("search visits %q\n git lists %q", got, want)
			}
		})
	}
}

// searchedFiles returns the sorted files that a search for "x" (which every
// generated file holds once) reports, restricted to gitTreeFiles.
func searchedFiles(t *testing.T, dir, glob string) []string {
	t.Helper()
	ws, err := sandbox.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	args := `{"query":"x","case_sensitive":true,"max_results":10000`
	if glob != "" {
		args += `,"glob":` + quoteJSON(glob)
	}
	res := callSearch(t, NewSearch(&Env{WS: ws}), args+"}")
	var files []string
	for _, m := range res.Matches {
		if slices.Contains(gitTreeFiles, m.File) && (len(files) == 0 || files[len(files)-1] != m.File) {
			files = append(files, m.File)
		}
	}
	slices.Sort(files)
	return files
}

func writeTreeFile(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func callSearch(t testing.TB, tool tools.Tool, args string) *SearchResult {
	t.Helper()
	res, err := tool.Call(context.Background(), []byte(args))
	if err != nil {
		t.Fatalf("search %s: %v", args, err)
	}
	return res.(*SearchResult)
}
