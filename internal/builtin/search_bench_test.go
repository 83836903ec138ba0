package builtin

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"

	"github.com/clawde/clawd/internal/support/cputime"
)

// genTree writes a synthetic source tree: dirs x files of Go-like text, a
// .gitignore and some ignored and binary files, ~6 MB in all.
func genTree(b *testing.B, dir string) {
	b.Helper()
	var body strings.Builder
	for i := range 400 {
		fmt.Fprintf(&body, "func f%d(ctx context.Context, n int) error {\n\tif err := g(n); err != nil {\n\t\treturn fmt.Errorf(\"f%d: %%w\", err)\n\t}\n\treturn nil\n}\n\n", i, i)
	}
	for d := range 20 {
		for f := range 20 {
			writeTreeFile(b, dir, fmt.Sprintf("pkg%02d/sub%d/file%02d.go", d, f%3, f), body.String())
		}
		writeTreeFile(b, dir, fmt.Sprintf("pkg%02d/out.log", d), body.String())
		writeTreeFile(b, dir, fmt.Sprintf("pkg%02d/blob.bin", d), "\x00"+body.String())
	}
	writeTreeFile(b, dir, ".gitignore", "*.log\n")
}

var benchQueries = []struct{ name, args string }{
	{"literal", `{"query":"Errorf","case_sensitive":true}`},
	{"literal-fold", `{"query":"errorf"}`},
	{"rare", `{"query":"f399(ctx","case_sensitive":true}`},
	{"regex", `{"query":"err\\s*!=\\s*nil","is_regex":true}`},
}

func BenchmarkSearch(b *testing.B) {
	dir := b.TempDir()
	genTree(b, dir)
	ws, err := sandbox.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	benchSearch(b, NewSearch(benchEnv(ws)), benchQueries)
}

// gorootQueries are bench/search.sh's queries.
var gorootQueries = []struct{ name, args string }{
	{"literal", `{"query":"func","case_sensitive":true}`},
	{"literal-fold", `{"query":"func"}`},
	{"rare", `{"query":"TrimLeftFunc","case_sensitive":true}`},
	{"rare-fold", `{"query":"trimleftfunc"}`},
	{"regex", `{"query":"func (\\(\\w+ \\*?\\w+\\) )?New\\w*\\(","is_regex":true,"case_sensitive":true}`},
	{"regex-fold", `{"query":"err\\s*!=\\s*nil","is_regex":true}`},
}

// BenchmarkSearchGoroot searches the tree named by CLAWD_SEARCH_BENCH_DIR
// (bench/search.sh uses a copy of $GOROOT/src); it is skipped without it.
func BenchmarkSearchGoroot(b *testing.B) {
	dir := os.Getenv("CLAWD_SEARCH_BENCH_DIR")
	if dir == "" {
		b.Skip("CLAWD_SEARCH_BENCH_DIR not set")
	}
	ws, err := sandbox.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	benchSearch(b, NewSearch(benchEnv(ws)), gorootQueries)
}

// benchEnv is the workspace with no practical time limit: a loaded machine
// must slow the measurement down, not stop it at tool_timeout_ms.
func benchEnv(ws *sandbox.Workspace) *Env {
	return &Env{WS: ws, Limits: func() Limits {
		l := DefaultLimits()
		l.DefaultTimeout = 10 * time.Minute
		return l
	}}
}

func benchSearch(b *testing.B, tool tools.Tool, queries []struct{ name, args string }) {
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			var total int
			cpu := cputime.Process()
			for b.Loop() {
				total = callSearch(b, tool, q.args).TotalMatches
			}
			// CPU time per search: on a shared machine it varies far less
			// than wall time, which other processes' load inflates.
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			if total == 0 {
				b.Fatalf("%s found nothing", q.args)
			}
			b.ReportMetric(float64(total), "matches")
		})
	}
}
