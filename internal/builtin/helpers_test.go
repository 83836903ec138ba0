package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// Tests here run as root in CI containers: root bypasses permission bits,
// so no test relies on a mode making something unreadable or unwritable.

// testEnv opens dir as a workspace for the tools, with optional limits.
func testEnv(t testing.TB, dir string, lim *Limits) *Env {
	t.Helper()
	ws, err := sandbox.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	env := &Env{WS: ws}
	if lim != nil {
		l := *lim
		env.Limits = func() Limits { return l }
	}
	return env
}

// callTool runs a tool with JSON arguments (a Go value or a raw JSON string).
func callTool(t testing.TB, tool tools.Tool, args any) (any, error) {
	t.Helper()
	return callToolCtx(context.Background(), t, tool, args)
}

func callToolCtx(ctx context.Context, t testing.TB, tool tools.Tool, args any) (any, error) {
	t.Helper()
	var raw jsontext.Value
	switch a := args.(type) {
	case string:
		raw = jsontext.Value(a)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	res, err := tool.Call(ctx, raw)
	if err == nil {
		// Every result must encode as JSON: it becomes structuredContent.
		if _, merr := json.Marshal(res); merr != nil {
			t.Fatalf("%s result does not encode: %v", tool.Spec().Name, merr)
		}
	}
	return res, err
}

func isViolation(err error) bool {
	var v *sandbox.Violation
	return errors.As(err, &v)
}

func isToolError(err error) bool {
	var te *tools.ToolError
	return errors.As(err, &te)
}

func isArgError(err error) bool {
	var ae *tools.ArgError
	return errors.As(err, &ae)
}

func writeFileT(t testing.TB, path, content string, perm fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

func symlinkT(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// snapshot records every entry under dir (dir itself included): kind, mode,
// size, modification time and a content hash, so a test can prove nothing
// there was read-modified, created, replaced or removed.
func snapshot(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := ""
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = hex.EncodeToString(h[:8])
		case fi.Mode()&fs.ModeSymlink != 0:
			sum, _ = os.Readlink(p)
		}
		lines = append(lines, fmt.Sprintf("%s %v %d %d %s", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), sum))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// tempFilesIn lists clawd temp files left anywhere under dir.
func tempFilesIn(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".clawd-write-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// deepName is name/name/.../name, depth times.
func deepName(name string, depth int) string {
	return strings.TrimSuffix(strings.Repeat(name+"/", depth), "/")
}
