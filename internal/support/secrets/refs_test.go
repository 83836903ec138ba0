package secrets

import (
	"strings"
	"testing"
)

func TestRefsAndExpand(t *testing.T) {
	env := map[string]string{"A": "1", "B_2": "two", "CLAWD_TOKEN": "secret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for in, want := range map[string]string{
		"plain":         "plain",
		"${A}":          "1",
		"$A-$B_2":       "1-two",
		"x${A}y${B_2}z": "x1ytwoz",
		"cost $5 and $": "cost $5 and $",
		"Bearer ${B_2}": "Bearer two",
		"$$A":           "$1",
		"{A}":           "{A}",
	} {
		got, err := ExpandRefs(in, lookup)
		if err != nil || got != want {
			t.Errorf("ExpandRefs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"${MISSING}":     "MISSING} is not set",
		"$CLAWD_TOKEN":   "clawd's own",
		"${CLAWD_TOKEN}": "clawd's own",
		"${A":            "unterminated",
		"${A-B}":         "not a variable name",
	} {
		got, err := ExpandRefs(in, lookup)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("ExpandRefs(%q) = %q, %v; want an error with %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"${GITHUB_TOKEN}":              "${GITHUB_TOKEN}",
		"$TOKEN":                       "$TOKEN",
		"Bearer ${API_TOKEN}":          "Bearer ${API_TOKEN}",
		"${USER}:${PASS}":              "${USER}:${PASS}",
		"sk-proj-abcdefghijklmnopwxyz": "sk-****wxyz",
		"hunter2":                      "****",
		"application/json":             "****",
		"key-${SUFFIX}":                "****${SUFFIX}",
		"Bearer sk-${X}":               "****${X}",
		"${UNTERMINATED":               "****",
		"":                             "",
	} {
		if got := MaskRefValue(in); got != want {
			t.Errorf("MaskRefValue(%q) = %q, want %q", in, got, want)
		}
	}
	if r := Refs("Bearer ${TOKEN} $USER"); strings.Join(r, ",") != "TOKEN,USER" {
		t.Errorf("Refs = %v", r)
	}
}
