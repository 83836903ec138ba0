package main

import (
	"io"
	"strings"
	"testing"
)

// TestTrustCaseVariantOfBuiltinRefused: tool names in a trust row match
// exactly, and no upstream tool may take a built-in's name in any case, so
// `--deny Bash` would deny nothing while bash stays allowed. It is a usage
// error naming the built-in; exact names and upstream names pass.
func TestTrustCaseVariantOfBuiltinRefused(t *testing.T) {
	for _, tc := range []struct{ allow, deny []string }{
		{deny: []string{"Bash"}},
		{deny: []string{"search", "READ_FILE"}},
		{allow: []string{"List_Dir"}},
	} {
		_, err := parseTrustArgs("local:*", "2", tc.allow, tc.deny)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "built-in") {
			t.Errorf("allow %v deny %v: %v", tc.allow, tc.deny, err)
		}
	}
	if _, err := parseTrustArgs("local:*", "2", []string{"gh__Search", "fs__*"}, []string{"bash", "write_file"}); err != nil {
		t.Fatal(err)
	}
}

// TestTrustSetToolListsKeepEveryName: --allow and --deny take repeated
// flags or comma-separated lists; a value with a newline or a quote is a
// usage error naming it, never a list cut short at the newline (which
// denied bash and silently not write_file) nor pflag's CSV error.
func TestTrustSetToolListsKeepEveryName(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, tc := range []struct {
		flag, value string
	}{
		{"--deny", "bash\nwrite_file"},
		{"--allow", "read_file\nbash"},
		{"--deny", `bash"`},
		{"--deny", "bash,"},
	} {
		root := newRootCmd()
		root.SetArgs([]string{"trust", "set", "local:x", "2", tc.flag, tc.value})
		root.SetOut(io.Discard)
		var msg strings.Builder
		if code := reportError(&msg, root.Execute()); code != 2 || !strings.Contains(msg.String(), "tool name") {
			t.Errorf("%s %q: exit %d: %s", tc.flag, tc.value, code, msg.String())
		}
	}
	e, err := parseTrustArgs("local:x", "2", []string{"read_file,list_dir", "search"}, []string{"bash,write_file"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"read_file": "allow", "list_dir": "allow", "search": "allow", "bash": "deny", "write_file": "deny"}
	if len(e.Perms) != len(want) {
		t.Fatalf("perms %v, want %v", e.Perms, want)
	}
	for k, v := range want {
		if e.Perms[k] != v {
			t.Errorf("perms %v, want %v", e.Perms, want)
		}
	}
}
