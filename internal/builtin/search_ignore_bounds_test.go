package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/cputime"
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

// One ignore-file line of many "**/*" (a 64 KiB line: 16,000 of them) is
// matched with a memo of every way to split the path among them: it took
// 1.8 s and 200 MiB for one 79-byte path, and a 1 MiB line tens of seconds
// and gigabytes, for each entry of the walk, with no check of the time
// limit inside. A pattern that would hold more "**" than the chain's budget
// is not applied.
func TestIgnoreStarStarLine(t *testing.T) {
	line := strings.Repeat("**/*", 16000) + "b\n"
	checkIgnore(t, []byte(line), deepName("a", 40), false)
	// Many such patterns in one file, and a file on every level of a
	// chain, are held to one budget for the chain.
	many := strings.Repeat(strings.Repeat("**/*", 40)+"b\n", 400)
	checkIgnore(t, []byte(many), deepName("a", 40), false)

	dir := t.TempDir()
	p := dir
	for range 8 {
		writeFileT(t, filepath.Join(p, ".gitignore"), many, 0o644)
		p = filepath.Join(p, "a")
	}
	for j := range 32 {
		writeFileT(t, filepath.Join(p, deepName("a", 30), fmt.Sprintf("f%d.txt", j)), "needle\n", 0o644)
	}
	env := testEnv(t, dir, &Limits{MaxReadBytes: 1 << 20, DefaultTimeout: 500 * time.Millisecond, MaxListEntries: 100, MaxSearchFileMB: 1})
	start, cpu := time.Now(), cputime.Process()
	res, err := callTool(t, NewSearch(env), map[string]any{"query": "needle"})
	took, used := time.Since(start), cputime.Process()-cpu
	if used > 1500*time.Millisecond {
		t.Errorf("search used %v of CPU (%v by the wall clock) with a 500 ms limit (err %v)", used, took, err)
	}
	if err == nil && res.(*SearchResult).TotalMatches != 32 {
		t.Errorf("%d matches, want 32", res.(*SearchResult).TotalMatches)
	}
}

// Ten thousand patterns of "**/*" and a long literal, each tried at every
// start of every name of a 4 KiB path: one entry's check took 8 s (the
// search root is that deep, so its first entries are). The walk must stop
// near its time limit, so the check looks at the call's context between
// patterns.
func TestSearchCostlyIgnoreChainStops(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 MiB of ignore patterns")
	}
	pat := "**/*" + strings.Repeat("a", 199) + "b\n"
	half := strings.Repeat(pat, (maxIgnoreFile-1)/len(pat))
	deep := filepath.Join("g", deepName(strings.Repeat("a", 250), 15))
	tool, dir := newSearchWS(t, map[string]string{
		".gitignore":                     half,
		"g/.gitignore":                   half,
		filepath.Join(deep, "f.txt"):     "needle\n",
		filepath.Join(deep, "other.txt"): "needle\n",
	})
	env := testEnv(t, dir, &Limits{MaxReadBytes: 1 << 20, DefaultTimeout: 500 * time.Millisecond, MaxListEntries: 100, MaxSearchFileMB: 1})
	_ = tool
	start, cpu := time.Now(), cputime.Process()
	_, err := callTool(t, NewSearch(env), map[string]any{"query": "needle", "path": filepath.ToSlash(deep)})
	took, used := time.Since(start), cputime.Process()-cpu
	t.Logf("%v of CPU, %v by the wall clock: %v", used, took, err)
	if used > 1500*time.Millisecond {
		t.Errorf("search used %v of CPU (%v by the wall clock) with a 500 ms limit (err %v)", used, took, err)
	}
}
