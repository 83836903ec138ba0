package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Each benchmark runs one tool through Call (argument decoding included)
// and, as "peer", the plain standard-library operation it wraps, so the
// tool's overhead reads as a ratio measured in the same run on the same
// (noisy, shared) machine:
//
//	go test -run '^$' -bench . -benchmem ./internal/tools/

func benchWS(b *testing.B) (string, *Env) {
	b.Helper()
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return dir, testEnv(b, dir, nil)
}

func benchArgs(b *testing.B, v map[string]any) jsontext.Value {
	raw, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

var tenKB = strings.Repeat("0123456789abcdef", 640) // 10,240 bytes of text

func BenchmarkReadFile(b *testing.B) {
	dir, env := benchWS(b)
	writeFileT(b, filepath.Join(dir, "src", "f.txt"), tenKB, 0o644)
	b.Run("tool", func(b *testing.B) {
		tool, args := NewReadFile(env), benchArgs(b, map[string]any{"path": "src/f.txt"})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tool.Call(context.Background(), args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("peer", func(b *testing.B) { // os.ReadFile by host path
		p := filepath.Join(dir, "src", "f.txt")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := os.ReadFile(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkWriteFile(b *testing.B) {
	dir, env := benchWS(b)
	writeFileT(b, filepath.Join(dir, "src", "keep"), "", 0o644)
	b.Run("tool", func(b *testing.B) {
		tool, args := NewWriteFile(env), benchArgs(b, map[string]any{"path": "src/out.txt", "content": tenKB})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tool.Call(context.Background(), args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("peer", func(b *testing.B) { // temp file + fsync + rename by host path
		p, data := filepath.Join(dir, "src", "peer.txt"), []byte(tenKB)
		b.ReportAllocs()
		for b.Loop() {
			f, err := os.CreateTemp(filepath.Dir(p), ".peer-*")
			if err != nil {
				b.Fatal(err)
			}
			f.Write(data)
			f.Sync()
			f.Close()
			if err := os.Rename(f.Name(), p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The tree: 10 directories of 98 files plus 10 files at the top: 1,000
// entries, listed recursively (default max_depth 3).
func BenchmarkListDir(b *testing.B) {
	dir, env := benchWS(b)
	for d := range 10 {
		for f := range 98 {
			writeFileT(b, filepath.Join(dir, fmt.Sprintf("d%02d", d), fmt.Sprintf("f%03d.go", f)), "x", 0o644)
		}
		writeFileT(b, filepath.Join(dir, fmt.Sprintf("top%02d.txt", d)), "x", 0o644)
	}
	b.Run("tool", func(b *testing.B) {
		tool, args := NewListDir(env), benchArgs(b, map[string]any{"recursive": true})
		res, err := tool.Call(context.Background(), args)
		if err != nil || res.(*ListDirResult).Total != 1000 {
			b.Fatalf("listing: %v, total %d", err, res.(*ListDirResult).Total)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tool.Call(context.Background(), args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("peer", func(b *testing.B) { // filepath.WalkDir + Lstat by host path
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && p != dir {
					if _, err := d.Info(); err == nil {
						n++
					}
				}
				return nil
			})
			if n != 1000 {
				b.Fatalf("walked %d", n)
			}
		}
	})
}

func BenchmarkBash(b *testing.B) {
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash not installed")
	}
	dir, env := benchWS(b)
	b.Run("tool", func(b *testing.B) {
		tool, args := NewBash(env), benchArgs(b, map[string]any{"command": "true"})
		b.ReportAllocs()
		for b.Loop() {
			res, err := tool.Call(context.Background(), args)
			if err != nil || res.(*BashResult).ExitCode != 0 {
				b.Fatal(err, res)
			}
		}
	})
	b.Run("peer", func(b *testing.B) { // exec.Command("bash", "-c", "true").Run()
		b.ReportAllocs()
		for b.Loop() {
			cmd := exec.Command(bashPath, "-c", "true")
			cmd.Dir = dir
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
