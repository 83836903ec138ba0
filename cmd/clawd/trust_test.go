package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/store"
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

// TestTrustChangesAreAudited: who may call what changes only on record, as
// an egress or executable approval does: trust set, rm and unbind write
// an audit row (local:cli, tool trust:ENTITY, step trust) naming the row
// after and before, inside the change's transaction; when the row cannot
// be written the change is not made. An agent that runs `clawd trust set`
// through bash leaves that row, however it hid its command line.
func TestTrustChangesAreAudited(t *testing.T) {
	ownHome(t)
	run := runCLI
	if code, msg := run("trust", "set", "local:x", "1", "--deny", "bash"); code != 0 {
		t.Fatalf("trust set: exit %d: %s", code, msg)
	}
	if code, msg := run("trust", "set", "local:x", "2"); code != 0 {
		t.Fatalf("trust set: exit %d: %s", code, msg)
	}
	if code, msg := run("trust", "rm", "local:x"); code != 0 {
		t.Fatalf("trust rm: exit %d: %s", code, msg)
	}
	p, err := config.DefaultPaths()
	if err != nil {
		t.Fatal(err)
	}
	// A file where the audit journal's directory belongs: no row can be
	// written, whoever runs this (root included).
	journal := p.DBFile + ".audit"
	if err := os.RemoveAll(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(journal, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, msg := run("trust", "set", "local:*", "3"); code == 0 || !strings.Contains(msg, "not made") {
		t.Errorf("trust set without an audit row: exit %d: %s", code, msg)
	}
	if code, msg := run("trust", "rm", "cc:*"); code == 0 || !strings.Contains(msg, "not made") {
		t.Errorf("trust rm without an audit row: exit %d: %s", code, msg)
	}
	os.Remove(journal)
	db, err := store.Open(p.DBFile, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if e, ok, err := db.Lookup("local:y"); err != nil || !ok || e.Entity != "local:*" || e.Level != 2 {
		t.Errorf("local:* after a change that could not be audited: %+v %v %v", e, ok, err)
	}
	if _, ok, err := db.Lookup("cc:y"); err != nil || !ok {
		t.Errorf("cc:* removed without an audit row: %v %v", ok, err)
	}
	rows, err := db.QueryAudit(context.Background(), store.AuditFilter{Tool: "trust:local:x"})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ result, reason string }{
		{chain.ResultAllow, "configure: level 1; allow -; deny bash; bound - (new row)"},
		{chain.ResultAllow, "configure: level 2; allow -; deny -; bound - (was level 1; allow -; deny bash; bound -)"},
		{chain.ResultDeny, "configure: removed (was level 2; allow -; deny -; bound -)"},
	}
	if len(rows) != len(want) {
		t.Fatalf("audit rows %+v, want %d", rows, len(want))
	}
	for i, r := range rows {
		if r.EntityID != "local:cli" || r.Step != chain.StepTrust || r.Result != want[i].result || r.Reason != want[i].reason ||
			r.Outcome == nil || *r.Outcome != chain.OutcomeOK {
			t.Errorf("row %d: %+v, want %s %q with outcome ok", i, r, want[i].result, want[i].reason)
		}
	}
}
