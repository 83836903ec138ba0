package main

import (
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
