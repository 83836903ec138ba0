package main

import (
	"io"
	"strings"
	"testing"
)

// TestReadParamsBounded: --params @FILE and @- read at most maxParamsBytes;
// more (a huge file, /dev/zero) is a usage error that says so, at once,
// rather than memory filled or a "not valid JSON" about a cut-off text.
func TestReadParamsBounded(t *testing.T) {
	big := io.MultiReader(strings.NewReader(`{"path":"`), strings.NewReader(strings.Repeat("a", maxParamsBytes)), strings.NewReader(`"}`))
	if _, err := readParams("@-", big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("stdin over the limit: %v", err)
	}
	if _, err := readParams("@/dev/zero", nil); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("@/dev/zero: %v", err)
	}
	if v, err := readParams("@-", strings.NewReader(`{"path":"a"}`)); err != nil || string(v) != `{"path":"a"}` {
		t.Fatalf("small params: %s %v", v, err)
	}
}
