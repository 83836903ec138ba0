package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

func quoteJSON(s string) string {
	b, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// newSearchWS creates a workspace with the given files and returns the
// search tool on it.
func newSearchWS(t testing.TB, files map[string]string) (tools.Tool, string) {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		writeTreeFile(t, dir, p, c)
	}
	ws, err := sandbox.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return NewSearch(&Env{WS: ws}), ws.Dir
}

// hit is a match without its text, for compact expectations.
type hit struct {
	File      string
	Line, Col int
}

func hitsOf(r *SearchResult) []hit {
	out := []hit{}
	for _, m := range r.Matches {
		out = append(out, hit{m.File, m.Line, m.Col})
	}
	return out
}

func TestSearchMatching(t *testing.T) {
	tool, _ := newSearchWS(t, map[string]string{
		"a.txt":      "Hello world\nhello HELLO hello\nnothing\n",
		"b/c.go":     "func main() {\n\tfmt.Println(\"hello\")\n}\n",
		"d.txt":      "-e and --help are data\nfoo.bar fooxbar\n",
		"e.txt":      "a\nb\nab\n  ab  \nfoo1 foo22\n",
		"uni.txt":    "K (Kelvin) and ſ (long s)\nÄrger ärger\n",
		"crlf.txt":   "one hello\r\ntwo\r\n",
		"noeol.txt":  "last hello",
		"multi.txt":  "aaaa\n",
		"tab.txt":    "x\thello\n",
		"utf8.txt":   "héllo hello\n",
		"empty.txt":  "",
		"spaces.txt": "a  b\n",
		"blank.txt":  "a\n\nb\n",
	})
	tests := []struct {
		name  string
		args  string
		hits  []hit
		total int
	}{
		{"literal is case-insensitive by default", `{"query":"hello","glob":"a.txt"}`,
			[]hit{{"a.txt", 1, 1}, {"a.txt", 2, 1}, {"a.txt", 2, 7}, {"a.txt", 2, 13}}, 4},
		{"case_sensitive", `{"query":"hello","glob":"a.txt","case_sensitive":true}`,
			[]hit{{"a.txt", 2, 1}, {"a.txt", 2, 13}}, 2},
		{"upper-case query folds too", `{"query":"HELLO","glob":"a.txt"}`,
			[]hit{{"a.txt", 1, 1}, {"a.txt", 2, 1}, {"a.txt", 2, 7}, {"a.txt", 2, 13}}, 4},
		{"query starting with dash is data", `{"query":"-e","glob":"d.txt"}`, []hit{{"d.txt", 1, 1}}, 1},
		{"double dash query", `{"query":"--help","glob":"d.txt"}`, []hit{{"d.txt", 1, 8}}, 1},
		{"literal dot is not a wildcard", `{"query":"foo.bar","glob":"d.txt"}`, []hit{{"d.txt", 2, 1}}, 1},
		{"regex dot", `{"query":"foo.bar","glob":"d.txt","is_regex":true}`, []hit{{"d.txt", 2, 1}, {"d.txt", 2, 9}}, 2},
		{"regex anchors are per line", `{"query":"^ab$","glob":"e.txt","is_regex":true}`, []hit{{"e.txt", 3, 1}}, 1},
		{"regex \\A is a line start", `{"query":"\\Aab","glob":"e.txt","is_regex":true}`, []hit{{"e.txt", 3, 1}}, 1},
		{"regex never spans lines", `{"query":"a\\s+b","glob":"e.txt","is_regex":true}`, []hit{}, 0},
		{"negated class never spans lines", `{"query":"a[^x]b","glob":"e.txt","is_regex":true}`, []hit{}, 0},
		{"regex occurrences", `{"query":"foo\\d+","glob":"e.txt","is_regex":true}`, []hit{{"e.txt", 5, 1}, {"e.txt", 5, 6}}, 2},
		{"regex case-insensitive by default", `{"query":"HEL+O","glob":"a.txt","is_regex":true}`,
			[]hit{{"a.txt", 1, 1}, {"a.txt", 2, 1}, {"a.txt", 2, 7}, {"a.txt", 2, 13}}, 4},
		{"regex inline flag overrides", `{"query":"(?-i)HELLO","glob":"a.txt","is_regex":true}`, []hit{{"a.txt", 2, 7}}, 1},
		{"kelvin sign folds with k", `{"query":"k (","glob":"uni.txt"}`, []hit{{"uni.txt", 1, 1}}, 1},
		{"long s folds with s", `{"query":"S (LONG","glob":"uni.txt"}`, []hit{{"uni.txt", 1, 16}}, 1},
		{"non-ASCII fold", `{"query":"ÄRGER","glob":"uni.txt"}`, []hit{{"uni.txt", 2, 1}, {"uni.txt", 2, 8}}, 2},
		{"col is a byte column", `{"query":"hello","glob":"utf8.txt","case_sensitive":true}`, []hit{{"utf8.txt", 1, 8}}, 1},
		{"tab counts one byte", `{"query":"hello","glob":"tab.txt"}`, []hit{{"tab.txt", 1, 3}}, 1},
		{"non-overlapping", `{"query":"aa","glob":"multi.txt"}`, []hit{{"multi.txt", 1, 1}, {"multi.txt", 1, 3}}, 2},
		{"last line without newline", `{"query":"hello","glob":"noeol.txt"}`, []hit{{"noeol.txt", 1, 6}}, 1},
		{"empty-matching regex counts once per line", `{"query":"^","glob":"e.txt","is_regex":true}`,
			[]hit{{"e.txt", 1, 1}, {"e.txt", 2, 1}, {"e.txt", 3, 1}, {"e.txt", 4, 1}, {"e.txt", 5, 1}}, 5},
		{"a final newline ends the last line", `{"query":"^$","glob":"blank.txt","is_regex":true}`, []hit{{"blank.txt", 2, 1}}, 1},
		{"empty file has no lines", `{"query":"^","glob":"empty.txt","is_regex":true}`, []hit{}, 0},
		{"regex literal fast path", `{"query":"foo\\.bar","glob":"d.txt","is_regex":true}`, []hit{{"d.txt", 2, 1}}, 1},
		{"regex with required literal", `{"query":"\\w+\\(\"hel","glob":"*.go","is_regex":true}`, []hit{{"b/c.go", 2, 6}}, 1},
		{"spaces literal", `{"query":"a  b","glob":"spaces.txt"}`, []hit{{"spaces.txt", 1, 1}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callSearch(t, tool, tt.args)
			if got := hitsOf(res); !slices.Equal(got, tt.hits) {
				t.Errorf("hits = %v, want %v", got, tt.hits)
			}
			if res.TotalMatches != tt.total {
				t.Errorf("total_matches = %d, want %d", res.TotalMatches, tt.total)
			}
			if res.Truncated {
				t.Errorf("truncated = true with %d of %d", len(res.Matches), res.TotalMatches)
			}
		})
	}
}

func TestSearchText(t *testing.T) {
	long := strings.Repeat("é", 400) + "NEEDLE" + strings.Repeat("z", 2000)
	tool, _ := newSearchWS(t, map[string]string{
		"crlf.txt": "one hello\r\ntwo\r\n",
		"bad.txt":  "bad \xff\xfe hello\n",
		"long.txt": long + "\n",
		"nul.txt":  "hello\x00", // NUL: binary, skipped
	})
	res := callSearch(t, tool, `{"query":"hello"}`)
	want := map[string]string{
		"bad.txt":  "bad \uFFFD hello",
		"crlf.txt": "one hello",
	}
	if len(res.Matches) != len(want) {
		t.Fatalf("matches = %+v, want files %v", res.Matches, want)
	}
	for _, m := range res.Matches {
		if m.Text != want[m.File] {
			t.Errorf("%s: text %q, want %q", m.File, m.Text, want[m.File])
		}
	}
	// The result must encode as JSON (valid UTF-8).
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("marshal: %v", err)
	}

	res = callSearch(t, tool, `{"query":"needle","glob":"long.txt"}`)
	if len(res.Matches) != 1 {
		t.Fatalf("long line: %+v", res.Matches)
	}
	m := res.Matches[0]
	if m.Col != 801 {
		t.Errorf("long line col = %d, want 801", m.Col)
	}
	if !strings.Contains(m.Text, "NEEDLE") || !strings.HasPrefix(m.Text, "…é") || !strings.HasSuffix(m.Text, "z…") {
		t.Errorf("long line text = %q: want a window around NEEDLE with … at both cuts", m.Text)
	}
	if n := len(m.Text); n > maxTextBytes+2*len("…") {
		t.Errorf("long line text is %d bytes, cap is %d", n, maxTextBytes)
	}
	if !strings.HasPrefix(strings.TrimPrefix(m.Text, "…"), "é") {
		t.Errorf("window does not start on a rune boundary: %q", m.Text[:8])
	}
}

func TestSearchMaxResultsAndOrder(t *testing.T) {
	files := map[string]string{}
	// 30 files, 3 lines each with 2 matches: 180 matches. Names chosen so
	// byte order differs from a per-directory walk: "a-b" < "a/b".
	var names []string
	for i := range 10 {
		names = append(names, fmt.Sprintf("a/f%02d.txt", i), fmt.Sprintf("a-b/f%02d.txt", i), fmt.Sprintf("z%02d.txt", i))
	}
	for _, n := range names {
		files[n] = "x x\nx x\nx x\n"
	}
	tool, _ := newSearchWS(t, files)
	slices.Sort(names)
	var all []hit
	for _, n := range names {
		for l := 1; l <= 3; l++ {
			all = append(all, hit{n, l, 1}, hit{n, l, 3})
		}
	}
	for _, k := range []int{1, 7, 50, 179, 180, 1000} {
		for run := range 3 { // the walk is parallel: results must not vary
			res := callSearch(t, tool, fmt.Sprintf(`{"query":"x","max_results":%d}`, k))
			want := all[:min(k, len(all))]
			if got := hitsOf(res); !slices.Equal(got, want) {
				t.Fatalf("k=%d run %d: hits = %v\nwant %v", k, run, got, want)
			}
			if res.TotalMatches != 180 {
				t.Errorf("k=%d: total_matches = %d, want 180", k, res.TotalMatches)
			}
			if res.Truncated != (k < 180) {
				t.Errorf("k=%d: truncated = %v", k, res.Truncated)
			}
		}
	}
	// Default max_results is 50.
	res := callSearch(t, tool, `{"query":"x"}`)
	if len(res.Matches) != 50 || !res.Truncated || res.TotalMatches != 180 {
		t.Errorf("default: %d matches, truncated %v, total %d", len(res.Matches), res.Truncated, res.TotalMatches)
	}
}

func TestSearchArgs(t *testing.T) {
	tool, _ := newSearchWS(t, map[string]string{"a.txt": "a\n"})
	tests := []struct {
		args string
		want string // substring of the error
	}{
		{`{}`, `"query" is required`},
		{`{"query":""}`, `must not be empty`},
		{`{"query":"a","max_results":0}`, `"max_results" must be between 1 and 10000`},
		{`{"query":"a","max_results":-5}`, `"max_results" must be between 1`},
		{`{"query":"a","max_results":10001}`, `"max_results" must be between 1`},
		{`{"query":"a","max_results":1.5}`, `"max_results"`},
		{`{"query":"a","max_results":"5"}`, `"max_results" has the wrong type`},
		{`{"query":7}`, `"query" has the wrong type`},
		{`{"query":"a","Query":"b"}`, `unknown argument "Query"`},
		{`{"query":"a","regex":true}`, `unknown argument "regex"`},
		{`{"query":"a\nb"}`, `line break`},
		{`{"query":"a(","is_regex":true}`, `invalid regular expression "a(": missing closing )`},
		{`{"query":"a{2,1}","is_regex":true}`, `invalid regular expression`},
		{`{"query":"(?<x","is_regex":true}`, `invalid regular expression`},
		{`{"query":"a","glob":"[a"}`, `"glob" "[a" is not a valid pattern`},
		{`{"query":"a","glob":"!"}`, `"glob" has no pattern`},
		{`{"query":"a","glob":"src/"}`, `use "src/**"`},
		{`{"query":"a","path":"nope"}`, `nope: no such file or directory`},
		{`{"query":"a","path":"a.txt/x"}`, `not a directory`},
	}
	for _, tt := range tests {
		_, err := tool.Call(context.Background(), []byte(tt.args))
		var ae *tools.ArgError
		var te *tools.ToolError
		if err == nil || !(errors.As(err, &ae) || errors.As(err, &te)) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want an *ArgError/*ToolError containing %q", tt.args, err, tt.want)
		}
	}
}

func TestSearchGlob(t *testing.T) {
	files := map[string]string{
		"main.rs":           "x\n",
		"src/main.rs":       "x\n",
		"src/lib/util.rs":   "x\n",
		"src/a.go":          "x\n",
		"src/vendor/v.go":   "x\n",
		"vendor/w.go":       "x\n",
		"docs/readme.md":    "x\n",
		"docs/src/notes.md": "x\n",
	}
	tool, _ := newSearchWS(t, files)
	tests := []struct {
		glob, path string
		want       []string
	}{
		{"*.rs", "", []string{"main.rs", "src/lib/util.rs", "src/main.rs"}},
		{"src/*.rs", "", []string{"src/main.rs"}},
		{"/main.rs", "", []string{"main.rs"}},
		{"src/**/*.rs", "", []string{"src/lib/util.rs", "src/main.rs"}},
		{"**/*.go", "", []string{"src/a.go", "src/vendor/v.go", "vendor/w.go"}},
		{"*.{go,md}", "", []string{"docs/readme.md", "docs/src/notes.md", "src/a.go", "src/vendor/v.go", "vendor/w.go"}},
		{"!*.rs", "", []string{"docs/readme.md", "docs/src/notes.md", "src/a.go", "src/vendor/v.go", "vendor/w.go"}},
		{"!vendor/", "", []string{"docs/readme.md", "docs/src/notes.md", "main.rs", "src/a.go", "src/lib/util.rs", "src/main.rs"}},
		{"!src", "", []string{"docs/readme.md", "main.rs", "vendor/w.go"}},
		{"!docs/src", "", []string{"docs/readme.md", "main.rs", "src/a.go", "src/lib/util.rs", "src/main.rs", "src/vendor/v.go", "vendor/w.go"}},
		// Paths in a glob are relative to the search root; results to the workspace.
		{"lib/*.rs", "src", []string{"src/lib/util.rs"}},
		{"*.rs", "src", []string{"src/lib/util.rs", "src/main.rs"}},
		{"*.RS", "", nil}, // case-sensitive, like rg -g
	}
	for _, tt := range tests {
		args := fmt.Sprintf(`{"query":"x","glob":%s,"path":%s}`, quoteJSON(tt.glob), quoteJSON(tt.path))
		res := callSearch(t, tool, args)
		var got []string
		for _, m := range res.Matches {
			got = append(got, m.File)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("glob %q path %q: files %q, want %q", tt.glob, tt.path, got, tt.want)
		}
	}
}

func TestSearchWalkRules(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"keep.txt":                  "QQ\n",
		".hidden.txt":               "QQ\n",
		".config/h.txt":             "QQ\n",
		".git/config":               "QQ\n",
		".git/info/exclude":         "excluded.txt\n",
		"excluded.txt":              "QQ\n",
		".gitignore":                "*.log\nbuild/\n",
		"a.log":                     "QQ\n",
		"build/out.txt":             "QQ\n",
		"sub/.gitignore":            "!b.log\n",
		"sub/b.log":                 "QQ\n",
		"sub/c.log":                 "QQ\n",
		".ignore":                   "!a.log\nignored-by-dot-ignore.txt\n",
		"ignored-by-dot-ignore.txt": "QQ\n",
		"nested/.git/HEAD":          "QQ\n",
		"nested/n.log":              "QQ\n", // a nested repository: the outer .gitignore stops
		"wt/.git":                   "gitdir: elsewhere\n",
		"wt/w.log":                  "QQ\n",
		"bin.dat":                   "QQ\x00\n",
		"big.bin":                   "QQ\x00" + strings.Repeat("QQ\n", 100000), // dropped after the first read
		"late-nul.txt":              "QQ" + strings.Repeat("y", binarySniff) + "\x00\n",
		"real/r.txt":                "QQ\n",
	}
	for p, c := range files {
		writeTreeFile(t, dir, p, c)
	}
	mustSymlink(t, "keep.txt", filepath.Join(dir, "link.txt"))
	mustSymlink(t, "real", filepath.Join(dir, "linkdir"))
	mustSymlink(t, "/etc/passwd", filepath.Join(dir, "outside.txt"))
	ws, err := sandbox.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	tool := NewSearch(&Env{WS: ws})
	res := callSearch(t, tool, `{"query":"QQ","max_results":1000}`)
	var got []string
	for _, m := range res.Matches {
		if len(got) == 0 || got[len(got)-1] != m.File {
			got = append(got, m.File)
		}
	}
	want := []string{
		".config/h.txt",
		".hidden.txt",
		"a.log", // re-included by .ignore, which beats .gitignore
		"keep.txt",
		"late-nul.txt", // NUL after the first 8 KiB: text
		"nested/n.log",
		"real/r.txt",
		"sub/b.log",
		"wt/w.log",
	}
	if !slices.Equal(got, want) {
		t.Errorf("searched files %q\nwant %q", got, want)
	}
	for _, m := range res.Matches {
		if strings.Contains(m.Text, "root:") {
			t.Errorf("search followed a symlink out of the workspace: %+v", m)
		}
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestSearchPaths(t *testing.T) {
	dir := t.TempDir()
	writeTreeFile(t, dir, "src/a.txt", "QQ\n")
	writeTreeFile(t, dir, "src/deep/b.txt", "QQ\n")
	writeTreeFile(t, dir, "src/deep/c.log", "QQ\n")
	writeTreeFile(t, dir, ".gitignore", "*.log\n/src/deep/b.txt\n")
	writeTreeFile(t, dir, "big.txt", "QQ"+strings.Repeat("\n", 1<<20))
	writeTreeFile(t, dir, "bin.dat", "QQ\x00")
	outside := t.TempDir()
	writeTreeFile(t, outside, "secret.txt", "QQ\n")
	mustSymlink(t, outside, filepath.Join(dir, "escape"))
	mustSymlink(t, "src", filepath.Join(dir, "srclink"))
	ws, err := sandbox.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	tool := NewSearch(&Env{WS: ws, Limits: func() Limits { l := DefaultLimits(); l.MaxSearchFileMB = 1; return l }})

	files := func(args string) []string {
		t.Helper()
		res := callSearch(t, tool, args)
		var out []string
		for _, m := range res.Matches {
			out = append(out, m.File)
		}
		return out
	}
	tests := []struct {
		args string
		want []string
	}{
		// The root's .gitignore applies below a subdirectory search root,
		// with anchored patterns still relative to their own directory.
		{`{"query":"QQ","path":"src"}`, []string{"src/a.txt"}},
		{`{"query":"QQ","path":"src/deep"}`, nil},
		{`{"query":"QQ","path":"./src/../src/"}`, []string{"src/a.txt"}},
		{`{"query":"QQ","path":` + quoteJSON(filepath.Join(ws.Dir, "src")) + `}`, []string{"src/a.txt"}},
		// A named file is searched even if ignored, as with rg.
		{`{"query":"QQ","path":"src/deep/c.log"}`, []string{"src/deep/c.log"}},
		// A symlink as the search root is followed when it stays inside;
		// as with rg, ignore rules see the path through the link, so the
		// anchored "/src/deep/b.txt" does not apply below it.
		{`{"query":"QQ","path":"srclink"}`, []string{"srclink/a.txt", "srclink/deep/b.txt"}},
		// Files over the size limit are skipped in a walk.
		{`{"query":"QQ","path":""}`, []string{"src/a.txt"}},
	}
	for _, tt := range tests {
		if got := files(tt.args); !slices.Equal(got, tt.want) {
			t.Errorf("%s: files %q, want %q", tt.args, got, tt.want)
		}
	}

	for _, args := range []string{
		`{"query":"QQ","path":"../x"}`,
		`{"query":"QQ","path":"/etc"}`,
		`{"query":"QQ","path":"escape"}`,
		`{"query":"QQ","path":"escape/secret.txt"}`,
	} {
		_, err := tool.Call(context.Background(), []byte(args))
		var v *sandbox.Violation
		if !errors.As(err, &v) {
			t.Errorf("%s: err = %v, want *sandbox.Violation", args, err)
		}
	}
	for args, want := range map[string]string{
		`{"query":"QQ","path":"big.txt"}`: "larger than the search limit of 1 MiB",
		`{"query":"QQ","path":"bin.dat"}`: "binary file",
	} {
		_, err := tool.Call(context.Background(), []byte(args))
		var te *tools.ToolError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want a *ToolError containing %q", args, err, want)
		}
	}
}

// cancelAfterFirst is a matcher that cancels the search when it is first
// used and counts how many files it is asked to scan.
type cancelAfterFirst struct {
	cancel context.CancelFunc
	scans  atomic.Int32
}

func (m *cancelAfterFirst) scan(buf []byte, fn func(int, int) bool) {
	m.scans.Add(1)
	m.cancel()
}

func TestSearchCancel(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%10, i)] = "some text with a word\n"
	}
	tool, _ := newSearchWS(t, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tool.Call(ctx, []byte(`{"query":"word"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("pre-cancelled: err = %v, want context.Canceled", err)
	}

	// Cancelled while walking: each worker finishes at most the file it is
	// scanning, and the walk returns (no worker waits forever).
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	m := &cancelAfterFirst{cancel: cancel}
	w := newWalker(ctx, m, nil, 1<<20, &collector{k: 10})
	st := tool.(*searchTool)
	done := make(chan error, 1)
	go func() { done <- st.searchRoot(w, "", ".") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled walk did not return")
	}
	if n, max := int(m.scans.Load()), runtime.GOMAXPROCS(0); n > max {
		t.Errorf("%d files scanned after cancelling on the first; want at most one per worker (%d)", n, max)
	}

	// Cancelled inside one big file: a regexp scan stops between engine calls.
	big := []byte(strings.Repeat("word word\n", 1<<20)) // 10 MiB, 2Mi matches
	for _, expr := range []string{`w\w+`, `wo+rd`} {    // without and with a prefilter
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rm, err := compileLine(ctx, expr, true, false)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		rm.scan(big, func(int, int) bool { n++; return true })
		if n > 2*rm.window/len("word word\n")+2 {
			t.Errorf("%s: %d matches reported after cancel; want at most one window's worth", expr, n)
		}
	}
}
