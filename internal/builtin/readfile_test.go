//go:build unix

package builtin

import (
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/tools"
)

func newReadWS(t *testing.T, lim *Limits) (string, tools.Tool) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(dir, "src", "main.rs"), "fn main() {\n    println!(\"hello\");\n}\n", 0o644)
	writeFileT(t, filepath.Join(dir, "bin.dat"), "\x00\xff\xfeok", 0o644)
	writeFileT(t, filepath.Join(dir, "utf8.txt"), "aé", 0o644) // 'a' + 2-byte rune
	writeFileT(t, filepath.Join(dir, "empty"), "", 0o644)
	symlinkT(t, "src/main.rs", filepath.Join(dir, "link"))
	symlinkT(t, "src", filepath.Join(dir, "srclink"))
	return dir, NewReadFile(testEnv(t, dir, lim))
}

func TestReadFile(t *testing.T) {
	const mainRS = "fn main() {\n    println!(\"hello\");\n}\n"
	tests := []struct {
		name string
		lim  *Limits
		args map[string]any
		want ReadFileResult
	}{
		{name: "utf8 default", args: map[string]any{"path": "src/main.rs"},
			want: ReadFileResult{Content: mainRS, SizeBytes: int64(len(mainRS)), Encoding: "utf8"}},
		{name: "base64 of binary", args: map[string]any{"path": "bin.dat", "encoding": "base64"},
			want: ReadFileResult{Content: base64.StdEncoding.EncodeToString([]byte("\x00\xff\xfeok")), SizeBytes: 5, Encoding: "base64"}},
		{name: "empty file", args: map[string]any{"path": "empty"},
			want: ReadFileResult{Content: "", SizeBytes: 0, Encoding: "utf8"}},
		{name: "in-root symlink is followed", args: map[string]any{"path": "link"},
			want: ReadFileResult{Content: mainRS, SizeBytes: int64(len(mainRS)), Encoding: "utf8"}},
		{name: "in-root directory link", args: map[string]any{"path": "srclink/main.rs"},
			want: ReadFileResult{Content: mainRS, SizeBytes: int64(len(mainRS)), Encoding: "utf8"}},
		{name: "cap cuts a rune: it is dropped", lim: &Limits{MaxReadBytes: 2}, args: map[string]any{"path": "utf8.txt"},
			want: ReadFileResult{Content: "a", SizeBytes: 3, Encoding: "utf8", Truncated: true}},
		{name: "cap in base64", lim: &Limits{MaxReadBytes: 2}, args: map[string]any{"path": "bin.dat", "encoding": "base64"},
			want: ReadFileResult{Content: base64.StdEncoding.EncodeToString([]byte("\x00\xff")), SizeBytes: 5, Encoding: "base64", Truncated: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, tool := newReadWS(t, tt.lim)
			res, err := callTool(t, tool, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := *res.(*ReadFileResult); got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReadFileAbsolutePathInside(t *testing.T) {
	dir, tool := newReadWS(t, nil)
	res, err := callTool(t, tool, map[string]any{"path": filepath.Join(dir, "src", "main.rs")})
	if err != nil || !strings.HasPrefix(res.(*ReadFileResult).Content, "fn main") {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestReadFileErrors(t *testing.T) {
	dir, tool := newReadWS(t, nil)
	if err := unix.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct {
		name    string
		args    any
		argErr  bool
		msgPart string
	}{
		{name: "invalid utf8", args: map[string]any{"path": "bin.dat"}, msgPart: `not valid UTF-8 (first invalid byte at offset 1); read it with "encoding": "base64"`},
		{name: "directory", args: map[string]any{"path": "src"}, msgPart: "is a directory; use list_dir"},
		{name: "fifo does not block", args: map[string]any{"path": "pipe"}, msgPart: "not a regular file (a named pipe)"},
		{name: "socket", args: map[string]any{"path": "sock"}, msgPart: "not a regular file (a socket)"},
		{name: "missing", args: map[string]any{"path": "nope.txt"}, msgPart: "no such file or directory"},
		{name: "below a file", args: map[string]any{"path": "empty/x"}, msgPart: "not a directory"},
		{name: "missing path", args: `{}`, argErr: true, msgPart: `"path" is required`},
		{name: "bad encoding", args: map[string]any{"path": "empty", "encoding": "hex"}, argErr: true, msgPart: `"encoding"`},
		{name: "unknown argument", args: `{"path":"empty","offset":3}`, argErr: true, msgPart: `unknown argument "offset"`},
		{name: "mistyped path", args: `{"path":7}`, argErr: true, msgPart: `"path"`},
		{name: "duplicate name", args: `{"path":"empty","path":"src/main.rs"}`, argErr: true, msgPart: "duplicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := callTool(t, tool, tt.args)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("read_file blocked")
			}
			if tt.argErr && !isArgError(err) || !tt.argErr && !isToolError(err) {
				t.Fatalf("error %T %v; want argErr=%v", err, err, tt.argErr)
			}
			if !strings.Contains(err.Error(), tt.msgPart) {
				t.Errorf("error %q does not mention %q", err, tt.msgPart)
			}
		})
	}
	// A NUL byte is not a path at all.
	if _, err := callTool(t, tool, map[string]any{"path": "a\x00b"}); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("NUL path: %v", err)
	}
	_ = os.Remove(filepath.Join(dir, "pipe"))
}

// ReadFileResult encodes itself on the hot path; it must match json.Marshal
// byte for byte, whatever the content.
func TestReadFileResultAppendJSONMatchesMarshal(t *testing.T) {
	for _, r := range []ReadFileResult{
		{},
		{Content: "fn main() {\n\tprintln!(\"hi\");\n}\n", SizeBytes: 38, Encoding: "utf8"},
		{Content: "é€😀 \u2028 <>& \x00\x1f\x7f \\", SizeBytes: 1 << 40, Encoding: "utf8", Truncated: true},
		{Content: "aGVsbG8=", SizeBytes: 5, Encoding: "base64"},
	} {
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON = %s\nMarshal    = %s", got, want)
		}
	}
}
