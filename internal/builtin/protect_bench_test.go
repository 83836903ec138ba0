//go:build unix

package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/sandbox"
)

// BenchmarkReadFileGuard measures what keeping clawd's state out of reach
// costs read_file: "none" has no guard (as before it existed), "outside"
// a guard whose state lies outside the workspace (the usual case: it must
// cost nothing), "inside" the state inside the workspace (every call
// stats the directories that hold it).
//
//	go test -run '^$' -bench ReadFileGuard -benchtime 20000x -count 10 ./internal/tools/ > g.txt
//	benchstat -col /guard g.txt
func BenchmarkReadFileGuard(b *testing.B) {
	state := func(base string) sandbox.ProtectedSet {
		data := filepath.Join(base, ".local", "share", "clawde")
		writeFileT(b, filepath.Join(data, "session.secret"), "00\n", 0o600)
		writeFileT(b, filepath.Join(data, "clawd.db"), "x", 0o600)
		writeFileT(b, filepath.Join(base, ".config", "clawde", "mcp-server.toml"), "\n", 0o600)
		writeFileT(b, filepath.Join(base, ".claude", "hooks", ".clawde-token-x"), "t\n", 0o600)
		return sandbox.ProtectedSet{
			Dirs: []sandbox.Protected{{Path: data, Why: "data"}, {Path: filepath.Join(base, ".config", "clawde"), Why: "config"}},
			Files: []sandbox.Protected{
				{Path: filepath.Join(data, "session.secret"), Why: "secret"},
				{Path: filepath.Join(base, ".claude", "hooks", ".clawde-token-") + "*", Why: "token"},
				{Path: filepath.Join(base, "run", "clawd.") + "*", Why: "socket"},
			},
		}
	}
	// The -fresh modes chmod the file before every read, so its ctime is
	// always newer than the guard's snapshot: the path a file the model
	// just wrote takes (the guard then stats the directories it watches).
	for _, mode := range []string{"none", "outside", "inside", "none-fresh", "inside-fresh"} {
		fresh := strings.HasSuffix(mode, "-fresh")
		b.Run("guard="+mode, func(b *testing.B) {
			dir, env := benchWS(b)
			writeFileT(b, filepath.Join(dir, "src", "f.txt"), tenKB, 0o644)
			switch strings.TrimSuffix(mode, "-fresh") {
			case "outside":
				other, err := filepath.EvalSymlinks(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				sandbox.NewGuard(env.WS, state(other))
			case "inside":
				sandbox.NewGuard(env.WS, state(dir))
				os.MkdirAll(filepath.Join(dir, "run"), 0o700)
			}
			if got := env.WS.Guard().Active(); got != strings.HasPrefix(mode, "inside") {
				b.Fatalf("guard active = %v", got)
			}
			tool, args := NewReadFile(env), benchArgs(b, map[string]any{"path": "src/f.txt"})
			// Let the files just written age past the guard's racy window,
			// as clawd's state and a model's files have in real use.
			time.Sleep(100 * time.Millisecond)
			if _, err := tool.Call(context.Background(), args); err != nil {
				b.Fatal(err)
			}
			f := filepath.Join(dir, "src", "f.txt")
			b.ReportAllocs()
			for b.Loop() {
				if fresh {
					os.Chmod(f, 0o644)
				}
				if _, err := tool.Call(context.Background(), args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
