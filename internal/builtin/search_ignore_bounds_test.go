package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A repository can nest a large .gitignore in every directory: git stores
// the one blob once, so a few KiB cloned become a 1 MiB file at each of
// dozens of levels. Every pattern of every level above a file is checked
// against each entry, and the patterns of the whole chain are in memory,
// so without a bound on the chain one entry's check took seconds (16 s
// past a 1 s limit for 100 levels, 1.8 GiB of heap). The search must end
// near its time limit.
func TestSearchManyIgnorePatterns(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MiB")
	}
	dir := t.TempDir()
	var sb strings.Builder
	for sb.Len() < maxIgnoreFile-8 {
		sb.WriteString("*q*z\n") // a glob: each is run through wildmatch
	}
	const levels = 40
	p := dir
	for range levels {
		writeFileT(t, filepath.Join(p, ".gitignore"), sb.String(), 0o644)
		p = filepath.Join(p, "a")
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for j := range 64 {
		writeFileT(t, filepath.Join(p, "f"+strings.Repeat("x", j)+".txt"), "needle\n", 0o644)
	}
	env := testEnv(t, dir, &Limits{MaxReadBytes: 1 << 20, DefaultTimeout: time.Second, MaxListEntries: 100, MaxSearchFileMB: 1})
	for _, args := range []map[string]any{
		{"query": "needle", "path": strings.TrimSuffix(strings.Repeat("a/", levels), "/")},
		{"query": "needle"},
	} {
		start := time.Now()
		res, err := callTool(t, NewSearch(env), args)
		took := time.Since(start)
		if took > 2500*time.Millisecond {
			t.Errorf("search %v took %v with a 1 s limit (err %v)", args, took, err)
		}
		if err == nil {
			if n := res.(*SearchResult).TotalMatches; n != 64 {
				t.Errorf("search %v: %d matches, want 64 (no pattern matches the files)", args, n)
			}
		}
	}
}

// An ignore file longer than maxIgnoreFile is read up to the last whole
// line within the cap: the cut line is not a pattern (cut to "*", it would
// ignore every file).
func TestSearchIgnoreFileCutAtLine(t *testing.T) {
	line := "*.log*\n" // cut after its first byte, it would be "*"
	var sb strings.Builder
	for sb.Len() < maxIgnoreFile-2000 {
		sb.WriteString("#" + strings.Repeat("c", 998) + "\n") // comments: no patterns
	}
	// A comment line up to the cap minus one byte, so the cap falls right
	// after the "*".
	sb.WriteString(strings.Repeat("#", maxIgnoreFile-1-sb.Len()-1) + "\n" + line)
	tool, _ := newSearchWS(t, map[string]string{".gitignore": sb.String(), "a.txt": "needle\n"})
	if res := callSearch(t, tool, `{"query":"needle"}`); res.TotalMatches != 1 {
		t.Errorf("total %d, want 1: a.txt is ignored by the cut last line", res.TotalMatches)
	}
}
