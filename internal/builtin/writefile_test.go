//go:build unix

package builtin

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/tools"
)

func newWriteWS(t *testing.T) (dir string, tool tools.Tool) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFileT(t, filepath.Join(dir, "sub", "old.txt"), "old", 0o644)
	writeFileT(t, filepath.Join(dir, "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	writeFileT(t, filepath.Join(dir, "ro.txt"), "read only", 0o444)
	symlinkT(t, "sub", filepath.Join(dir, "in_link"))
	symlinkT(t, "sub/old.txt", filepath.Join(dir, "file_link"))
	return dir, NewWriteFile(testEnv(t, dir, nil))
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name      string
		args      map[string]any
		wantPath  string // relative to the workspace; the result's path must be its absolute form
		wantData  string
		wantMode  os.FileMode // 0: do not check
		wantBytes int64
	}{
		{name: "new file", args: map[string]any{"path": "new.txt", "content": "hello\n"},
			wantPath: "new.txt", wantData: "hello\n", wantBytes: 6},
		{name: "replace keeps content whole", args: map[string]any{"path": "sub/old.txt", "content": "new"},
			wantPath: "sub/old.txt", wantData: "new", wantMode: 0o644, wantBytes: 3},
		{name: "executable stays executable", args: map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho bye\n"},
			wantPath: "run.sh", wantData: "#!/bin/sh\necho bye\n", wantMode: 0o755, wantBytes: 19},
		{name: "base64", args: map[string]any{"path": "bin.dat", "content": base64.StdEncoding.EncodeToString([]byte{0, 0xff, 'x'}), "encoding": "base64"},
			wantPath: "bin.dat", wantData: "\x00\xffx", wantBytes: 3},
		// Line breaks are ignored (docs/tools.md): base64(1) and MIME wrap at 76 columns.
		{name: "base64 wrapped in lines", args: map[string]any{"path": "wrapped.dat", "content": "aGVs\nbG8=\r\n", "encoding": "base64"},
			wantPath: "wrapped.dat", wantData: "hello", wantBytes: 5},
		{name: "empty content", args: map[string]any{"path": "empty.txt", "content": ""},
			wantPath: "empty.txt", wantData: "", wantBytes: 0},
		{name: "unicode", args: map[string]any{"path": "u.txt", "content": "héllo ✓"},
			wantPath: "u.txt", wantData: "héllo ✓", wantBytes: int64(len("héllo ✓"))},
		{name: "create_parents", args: map[string]any{"path": "a/b/c/d.txt", "content": "deep", "create_parents": true},
			wantPath: "a/b/c/d.txt", wantData: "deep", wantBytes: 4},
		{name: "create_parents with existing parent", args: map[string]any{"path": "sub/x.txt", "content": "x", "create_parents": true},
			wantPath: "sub/x.txt", wantData: "x", wantBytes: 1},
		{name: "canonical path resolves an in-root parent link", args: map[string]any{"path": "in_link/via.txt", "content": "v"},
			wantPath: "sub/via.txt", wantData: "v", wantBytes: 1},
		{name: "dot segments", args: map[string]any{"path": "./sub/../sub/./dots.txt", "content": "d"},
			wantPath: "sub/dots.txt", wantData: "d", wantBytes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, tool := newWriteWS(t)
			res, err := callTool(t, tool, tt.args)
			if err != nil {
				t.Fatalf("write_file: %v", err)
			}
			r := res.(*WriteFileResult)
			want := filepath.Join(dir, tt.wantPath)
			if r.Path != want || r.BytesWritten != tt.wantBytes {
				t.Errorf("result = %+v, want path %s, bytes %d", r, want, tt.wantBytes)
			}
			got, err := os.ReadFile(want)
			if err != nil || string(got) != tt.wantData {
				t.Errorf("file content = %q, %v; want %q", got, err, tt.wantData)
			}
			fi, err := os.Lstat(want)
			if err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s is not a regular file: %v %v", want, fi, err)
			}
			if tt.wantMode != 0 && fi.Mode().Perm() != tt.wantMode {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tt.wantMode)
			}
			if tt.wantMode == 0 && fi.Mode().Perm()&0o111 != 0 {
				t.Errorf("new file is executable: %v", fi.Mode())
			}
			if left := tempFilesIn(t, dir); len(left) > 0 {
				t.Errorf("temp files left: %v", left)
			}
		})
	}
}

func TestWriteFileAbsolutePathInside(t *testing.T) {
	dir, tool := newWriteWS(t)
	p := filepath.Join(dir, "sub", "abs.txt")
	res, err := callTool(t, tool, map[string]any{"path": p, "content": "abs"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*WriteFileResult).Path; got != p {
		t.Errorf("path = %q, want %q", got, p)
	}
}

func TestWriteFileErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    any
		argErr  bool   // want *ArgError (else *ToolError)
		msgPart string // the message must say this
	}{
		{name: "missing parent", args: map[string]any{"path": "nodir/x.txt", "content": "x"}, msgPart: `"create_parents": true`},
		{name: "directory target", args: map[string]any{"path": "sub", "content": "x"}, msgPart: "is a directory"},
		{name: "root", args: map[string]any{"path": ".", "content": "x"}, msgPart: "names a directory"},
		{name: "empty path", args: map[string]any{"path": "", "content": "x"}, msgPart: "names a directory"},
		{name: "trailing slash", args: map[string]any{"path": "newdir/", "content": "x"}, msgPart: "names a directory"},
		// A last component "." or ".." names a directory too, though the
		// lexical cleaning drops it ("new/." would become the file "new").
		{name: "trailing /.", args: map[string]any{"path": "newdir/.", "content": "x"}, msgPart: "names a directory"},
		{name: "trailing /..", args: map[string]any{"path": "newdir/sub/..", "content": "x", "create_parents": true}, msgPart: "names a directory"},
		{name: "read-only file", args: map[string]any{"path": "ro.txt", "content": "x"}, msgPart: "read-only"},
		{name: "parent is a file", args: map[string]any{"path": "run.sh/x.txt", "content": "x"}, msgPart: "not a directory"},
		{name: "parent is a file, create_parents", args: map[string]any{"path": "run.sh/y/x.txt", "content": "x", "create_parents": true}, msgPart: "not a directory"},
		{name: "bad base64", args: map[string]any{"path": "b.bin", "content": "!!notbase64", "encoding": "base64"}, argErr: true, msgPart: "base64"},
		{name: "base64 without padding", args: map[string]any{"path": "b.bin", "content": "aGVsbG8", "encoding": "base64"}, argErr: true, msgPart: "base64"},
		{name: "base64 URL alphabet", args: map[string]any{"path": "b.bin", "content": "-_-_", "encoding": "base64"}, argErr: true, msgPart: "base64"},
		{name: "base64 with a space", args: map[string]any{"path": "b.bin", "content": "aGV sbG8=", "encoding": "base64"}, argErr: true, msgPart: "base64"},
		{name: "bad encoding", args: map[string]any{"path": "b.bin", "content": "x", "encoding": "latin1"}, argErr: true, msgPart: "encoding"},
		{name: "missing path", args: map[string]any{"content": "x"}, argErr: true, msgPart: `"path" is required`},
		{name: "missing content", args: map[string]any{"path": "x.txt"}, argErr: true, msgPart: `"content" is required`},
		{name: "unknown argument", args: `{"path":"x.txt","content":"x","mode":"0777"}`, argErr: true, msgPart: `unknown argument "mode"`},
		{name: "case-variant name", args: `{"path":"x.txt","content":"x","Path":"y.txt"}`, argErr: true, msgPart: `"Path"`},
		{name: "mistyped create_parents", args: `{"path":"x.txt","content":"x","create_parents":"yes"}`, argErr: true, msgPart: `"create_parents"`},
		{name: "mistyped content", args: `{"path":"x.txt","content":42}`, argErr: true, msgPart: `"content"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, tool := newWriteWS(t)
			before := snapshot(t, dir)
			res, err := callTool(t, tool, tt.args)
			if err == nil {
				t.Fatalf("got %+v, want an error", res)
			}
			if tt.argErr && !isArgError(err) || !tt.argErr && !isToolError(err) {
				t.Errorf("error %T %v; want argErr=%v", err, err, tt.argErr)
			}
			if !strings.Contains(err.Error(), tt.msgPart) {
				t.Errorf("error %q does not mention %q", err, tt.msgPart)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("workspace changed by a failed write:\n%s\n---\n%s", before, after)
			}
		})
	}
}

// A symlink at the target is replaced by a regular file; the file it pointed
// to keeps its content.
func TestWriteFileReplacesSymlink(t *testing.T) {
	dir, tool := newWriteWS(t)
	if _, err := callTool(t, tool, map[string]any{"path": "file_link", "content": "replaced"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(dir, "file_link"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("file_link is %v, %v; want a regular file", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "old.txt")); string(b) != "old" {
		t.Errorf("link target changed to %q", b)
	}
}

// A hard link at the target cannot carry the write to its other name, even
// one outside the workspace (same file system).
func TestWriteFileHardLinkOutside(t *testing.T) {
	f := newEscapeFixture(t)
	outsideFile := filepath.Join(f.outside, "hard.txt")
	writeFileT(t, outsideFile, outsideSecret, 0o644)
	if err := os.Link(outsideFile, filepath.Join(f.ws, "hard.txt")); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}
	before := snapshot(t, f.outside)
	if _, err := callTool(t, NewWriteFile(f.env), map[string]any{"path": "hard.txt", "content": "mine"}); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, f.outside); after != before {
		t.Errorf("outside changed through a hard link:\n%s\n---\n%s", before, after)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "hard.txt")); string(b) != "mine" {
		t.Errorf("workspace name has %q", b)
	}
}

// Special files are refused without blocking: a FIFO as target or as parent.
func TestWriteFileFIFO(t *testing.T) {
	dir, tool := newWriteWS(t)
	if err := unix.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{"pipe", "pipe/x.txt"} {
		done := make(chan error, 1)
		go func() {
			_, err := NewWriteFile(tool.(*writeFile).env).Call(t.Context(), []byte(`{"path":"`+p+`","content":"x"}`))
			done <- err
		}()
		select {
		case err := <-done:
			if !isToolError(err) {
				t.Errorf("%s: got %v, want a tool error", p, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("write_file %s blocked on a FIFO", p)
		}
	}
}

// replaceFile removes its temp file when the final rename fails (here: the
// name is a non-empty directory).
func TestReplaceFileCleansUp(t *testing.T) {
	dir, _ := newWriteWS(t)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := replaceFile(r, "sub", []byte("x"), 0o644, false); err == nil {
		t.Fatal("rename over a directory succeeded")
	}
	if left := tempFilesIn(t, dir); len(left) > 0 {
		t.Errorf("temp files left after a failed rename: %v", left)
	}
}

// Readers see the old content or the new, never a mix or a short file.
func TestWriteFileAtomic(t *testing.T) {
	dir, tool := newWriteWS(t)
	a, b := strings.Repeat("a", 64<<10), strings.Repeat("b", 64<<10)
	writeFileT(t, filepath.Join(dir, "atomic.txt"), a, 0o644)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads, bad atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			got, err := os.ReadFile(filepath.Join(dir, "atomic.txt"))
			reads.Add(1)
			if err != nil || len(got) != len(a) || !(bytes.Equal(got, []byte(a)) || bytes.Equal(got, []byte(b))) {
				bad.Add(1)
			}
		}
	}()
	for i := range 200 {
		c := a
		if i%2 == 0 {
			c = b
		}
		if _, err := callTool(t, tool, map[string]any{"path": "atomic.txt", "content": c}); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d of %d reads saw a partial or mixed file", bad.Load(), reads.Load())
	}
}
