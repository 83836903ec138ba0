package hostadapter

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCRLFFileKeepsCRLF: a file with Windows line endings gets its new
// lines with the same endings, so it does not end up with mixed ones.
func TestCRLFFileKeepsCRLF(t *testing.T) {
	for _, name := range []string{"vscode", "opencode", "claude-code"} {
		a, _ := Lookup(name)
		o := testOptions(t, Project, Stdio)
		e, _ := a.Entry(o)
		os.MkdirAll(filepath.Dir(e.File), 0o755)
		orig := strings.ReplaceAll(existing[name], "\n", "\r\n")
		os.WriteFile(e.File, []byte(orig), 0o644)
		install(t, a, o)
		got, _ := os.ReadFile(e.File)
		if n := bytes.Count(got, []byte("\n")); n != bytes.Count(got, []byte("\r\n")) {
			t.Fatalf("%s: %d of %d line endings are not CRLF:\n%q", name, n-bytes.Count(got, []byte("\r\n")), n, got)
		}
		if v, ok, err := GetMember(got, e.Path, ServerName); !ok || err != nil || !bytes.Equal(v, e.Value) {
			t.Fatalf("%s: entry not in the file: %v %v", name, ok, err)
		}
		// Replacing the entry keeps the endings too.
		o.Transport = UnixSocket
		install(t, a, o)
		got, _ = os.ReadFile(e.File)
		if n := bytes.Count(got, []byte("\n")); n != bytes.Count(got, []byte("\r\n")) {
			t.Fatalf("%s: replacing the entry added LF endings:\n%q", name, got)
		}
		c, _ := PlanUninstall(e.File, e.Path, o.Workspace)
		Apply(c)
		if b, _ := os.ReadFile(e.File); string(b) != orig {
			t.Fatalf("%s: not restored:\n%q", name, b)
		}
	}
	// The hook's settings and the approval file are spliced the same way.
	src := []byte("{\r\n  \"hooks\": {\r\n    \"SessionStart\": [\r\n      {\"hooks\": []}\r\n    ]\r\n  }\r\n}\r\n")
	out, err := addHook(src, "x")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(out, []byte("\n")) != bytes.Count(out, []byte("\r\n")) {
		t.Fatalf("hook added LF endings:\n%q", out)
	}
}

// TestBOMFileAccepted: a file that starts with a UTF-8 byte order mark
// (Windows editors write one; VS Code reads such files) is edited, and
// keeps its mark.
func TestBOMFileAccepted(t *testing.T) {
	a, _ := Lookup("vscode")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	os.MkdirAll(filepath.Dir(e.File), 0o755)
	orig := "\ufeff" + existing["vscode"]
	os.WriteFile(e.File, []byte(orig), 0o644)
	install(t, a, o)
	got, _ := os.ReadFile(e.File)
	if !bytes.HasPrefix(got, []byte("\ufeff")) {
		t.Fatalf("byte order mark lost:\n%q", got)
	}
	if v, ok, err := GetMember(got, e.Path, ServerName); !ok || err != nil || !bytes.Equal(v, e.Value) {
		t.Fatalf("entry not in the file: %v %v", ok, err)
	}
	c, err := PlanUninstall(e.File, e.Path, o.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	Apply(c)
	if b, _ := os.ReadFile(e.File); string(b) != orig {
		t.Fatalf("not restored:\n%q", b)
	}
}

// TestDeepNestingRefused: a file nested deeper than any config (a cloned
// repository's .mcp.json of 10 MB of '[') is refused with an error naming
// the file, before the parser's recursion can exhaust the stack (a fatal
// error, not even a panic) or memory.
func TestDeepNestingRefused(t *testing.T) {
	a, _ := Lookup("claude-code")
	o := testOptions(t, Project, Stdio)
	e, _ := a.Entry(o)
	const n = 100000
	deep := `{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	os.WriteFile(e.File, []byte(deep), 0o644)
	if _, err := PlanInstall(a, o); err == nil || !strings.Contains(err.Error(), "nested") || !strings.Contains(err.Error(), e.File) {
		t.Fatalf("install: %v", err)
	}
	if _, err := PlanUninstall(e.File, e.Path, o.Workspace); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("uninstall: %v", err)
	}
	if err := CheckNesting([]byte(deep)); err == nil {
		t.Fatal("CheckNesting passes a deep file")
	}
	// Brackets in strings and comments do not count; ordinary nesting passes.
	ok := "{\"s\": \"" + strings.Repeat("[", 5000) + "\", // " + strings.Repeat("{", 5000) + "\n \"t\": [[{\"u\": /* [[[[ */ 1}]]]}"
	if err := CheckNesting([]byte(ok)); err != nil {
		t.Fatal(err)
	}
}

// TestLineCommentAtEndOfFile: a file whose last line is a // comment
// without a final newline (VS Code does not add one by default) is valid
// JSONC and is edited like any other.
func TestLineCommentAtEndOfFile(t *testing.T) {
	src := []byte("{\n\t\"servers\": {}\n} // end")
	out, err := SetMember(src, []string{"servers"}, ServerName, []byte(`{"command":"clawd"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(out, []byte("} // end")) {
		t.Fatalf("the comment moved or changed:\n%s", out)
	}
	back, ok, err := RemoveMember(out, []string{"servers"}, ServerName)
	if err != nil || !ok || !bytes.HasSuffix(back, []byte("} // end")) {
		t.Fatalf("remove: %v %v\n%s", ok, err, back)
	}
}
