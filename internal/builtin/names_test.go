package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badName is a file name that is not valid UTF-8, as a cloned repository can
// carry (git stores names as bytes; Linux file systems take any bytes but
// "/" and NUL).
const badName = "bad\xff\xfename.txt"

// newBadNameWS makes a workspace holding badName and a directory with an
// invalid name, or skips where the file system refuses such names (APFS).
func newBadNameWS(t *testing.T) *Env {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, badName), []byte("needle\n"), 0o644); err != nil {
		t.Skipf("the file system refuses a name that is not UTF-8: %v", err)
	}
	writeFileT(t, filepath.Join(dir, "d\xc3", "inner.txt"), "needle\n", 0o644)
	writeFileT(t, filepath.Join(dir, "ok.txt"), "needle\n", 0o644)
	writeFileT(t, filepath.Join(dir, "cr\r\nlf.txt"), "needle\n", 0o644)
	return testEnv(t, dir, nil)
}

// One file whose name is not UTF-8 must not make the whole listing fail
// (the answer is JSON, which carries only UTF-8): its invalid bytes are
// shown as U+FFFD and every other entry is listed as usual.
func TestListDirInvalidUTF8Name(t *testing.T) {
	env := newBadNameWS(t)
	res, err := callTool(t, NewListDir(env), map[string]any{"recursive": true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range res.(*ListDirResult).Entries {
		got[e.Path] = e.Name
	}
	want := map[string]string{
		"bad\uFFFDname.txt": "bad\uFFFDname.txt", "d\uFFFD": "d\uFFFD", "d\uFFFD/inner.txt": "inner.txt",
		"ok.txt": "ok.txt", "cr\r\nlf.txt": "cr\r\nlf.txt",
	}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("entry %q: name %q, want %q (all: %q)", p, got[p], n, got)
		}
	}
}

// The same for search: a match in a file whose path is not UTF-8 is
// reported with U+FFFD in its path, and the other matches are kept.
func TestSearchInvalidUTF8Name(t *testing.T) {
	env := newBadNameWS(t)
	res, err := callTool(t, NewSearch(env), map[string]any{"query": "needle"})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, m := range res.(*SearchResult).Matches {
		files = append(files, m.File)
	}
	want := []string{"bad\uFFFDname.txt", "cr\r\nlf.txt", "d\uFFFD/inner.txt", "ok.txt"}
	if len(files) != len(want) {
		t.Fatalf("files = %q, want %q", files, want)
	}
	for i := range want {
		if files[i] != want[i] {
			t.Errorf("files = %q, want %q", files, want)
			break
		}
	}
}

// write_file reports the canonical path, symlinks resolved: a link with a
// UTF-8 name to a directory whose name is not UTF-8 must not turn a write
// that happened into an answer that cannot be encoded.
func TestWriteFileCanonicalPathNotUTF8(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d\xff"), 0o755); err != nil {
		t.Skipf("the file system refuses a name that is not UTF-8: %v", err)
	}
	symlinkT(t, "d\xff", filepath.Join(dir, "link"))
	res, err := callTool(t, NewWriteFile(testEnv(t, dir, nil)), map[string]any{"path": "link/x.txt", "content": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.(*WriteFileResult).Path; !strings.HasSuffix(p, "/d\uFFFD/x.txt") {
		t.Errorf("path = %q, want it to end in d\\uFFFD/x.txt", p)
	}
}
