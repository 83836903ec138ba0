// Command searchbench times clawd's search tool in-process against ripgrep
// on the same tree, alternating the two within each round so both see the
// same cache and machine load, and prints median wall times and the ratio.
// bench/search.sh prepares the tree and runs it; see docs/search.md for the
// choice of ripgrep flags.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

type query struct {
	name          string
	q             string
	regex         bool
	caseSensitive bool
}

var queries = []query{
	{"common literal, case-sensitive", "func", false, true},
	{"common literal, case-insensitive", "func", false, false},
	{"rare literal, case-sensitive", "TrimLeftFunc", false, true},
	{"rare literal, case-insensitive", "trimleftfunc", false, false},
	{"regex, case-sensitive", `func (\(\w+ \*?\w+\) )?New\w*\(`, true, true},
	{"regex, case-insensitive", `err\s*!=\s*nil`, true, false},
}

// rgArgs are the ripgrep flags that make it search what clawd searches and
// count what clawd counts (docs/search.md explains each).
func rgArgs(q query) []string {
	a := []string{"--no-config", "--hidden", "--no-require-git", "--no-ignore-global",
		"--no-ignore-parent", "--max-filesize", "64M", "--count-matches", "--no-messages"}
	if !q.regex {
		a = append(a, "--fixed-strings")
	}
	if q.caseSensitive {
		a = append(a, "--case-sensitive")
	} else {
		a = append(a, "--ignore-case")
	}
	return append(a, "--regexp", q.q, ".")
}

func main() {
	dir := flag.String("dir", "", "tree to search (a copy of $GOROOT/src)")
	rounds := flag.Int("rounds", 5, "rounds per query")
	rg := flag.String("rg", "rg", "ripgrep binary")
	only := flag.String("only", "", "run only queries whose name contains this")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "searchbench: -dir is required")
		os.Exit(2)
	}
	ws, err := sandbox.Open(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
	// No practical time limit: a loaded machine must slow the measurement
	// down, not stop a search at tool_timeout_ms.
	lim := builtin.DefaultLimits()
	lim.DefaultTimeout = 10 * time.Minute
	search := builtin.NewSearch(&builtin.Env{WS: ws, Limits: func() builtin.Limits { return lim }})
	out := filepath.Join(os.TempDir(), "searchbench-rg.out")
	defer os.Remove(out)

	fmt.Printf("tree %s, %d rounds, GOMAXPROCS workers; medians of wall time\n", *dir, *rounds)
	fmt.Printf("%-34s %10s %10s %7s %10s %10s\n", "query", "rg", "clawd", "ratio", "rg count", "clawd count")
	worst := 0.0
	for _, q := range queries {
		if *only != "" && !strings.Contains(q.name, *only) {
			continue
		}
		var tr, tc []time.Duration
		var nr, nc int
		// One untimed round warms the page cache and both code paths.
		if _, _, err := runRG(*rg, ws.Dir, out, q); err != nil {
			fmt.Fprintln(os.Stderr, "searchbench: rg:", err)
			os.Exit(1)
		}
		if _, _, err := runClawd(search, q); err != nil {
			fmt.Fprintln(os.Stderr, "searchbench: clawd:", err)
			os.Exit(1)
		}
		for range *rounds {
			d, n, err := runRG(*rg, ws.Dir, out, q)
			if err != nil {
				fmt.Fprintln(os.Stderr, "searchbench: rg:", err)
				os.Exit(1)
			}
			tr, nr = append(tr, d), n
			d, n, err = runClawd(search, q)
			if err != nil {
				fmt.Fprintln(os.Stderr, "searchbench: clawd:", err)
				os.Exit(1)
			}
			tc, nc = append(tc, d), n
		}
		mr, mc := median(tr), median(tc)
		ratio := float64(mc) / float64(mr)
		worst = max(worst, ratio)
		fmt.Printf("%-34s %10s %10s %6.2fx %10d %10d\n", q.name, ms(mr), ms(mc), ratio, nr, nc)
	}
	fmt.Printf("worst ratio clawd/rg: %.2fx\n", worst)
}

func runRG(rg, dir, out string, q query) (time.Duration, int, error) {
	f, err := os.Create(out)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	cmd := exec.Command(rg, rgArgs(q)...)
	cmd.Dir = dir
	cmd.Stdout = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil // no match
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	if _, err := f.Seek(0, 0); err != nil {
		return 0, 0, err
	}
	total := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		n, err := strconv.Atoi(line[strings.LastIndexByte(line, ':')+1:])
		if err != nil {
			return 0, 0, fmt.Errorf("rg output %q: %v", line, err)
		}
		total += n
	}
	return d, total, sc.Err()
}

func runClawd(t tools.Tool, q query) (time.Duration, int, error) {
	args, err := jsontext.AppendQuote(nil, q.q)
	if err != nil {
		return 0, 0, err
	}
	raw := fmt.Sprintf(`{"query":%s,"is_regex":%t,"case_sensitive":%t}`, args, q.regex, q.caseSensitive)
	start := time.Now()
	res, err := t.Call(context.Background(), jsontext.Value(raw))
	d := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	return d, res.(*builtin.SearchResult).TotalMatches, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
