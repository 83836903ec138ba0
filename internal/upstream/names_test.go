package upstream

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAssignNames(t *testing.T) {
	keys := []toolKey{
		{"github", "search"}, {"GitHub", "search"}, {"fs", "read_file"}, {"fs", "bash"},
		{"weird", "naïve tool"}, {"weird", "naive tool"},
		{"long", strings.Repeat("x", 80)}, {"long", strings.Repeat("x", 81)},
		{"a_", "_b"}, {"a", "__b"},
	}
	builtin := []string{"bash", "read_file", "FS__BASH"}
	got := assignNames(builtin, keys, 64)
	seen := map[string]toolKey{}
	for _, k := range keys {
		n := got[k]
		if !validName.MatchString(n.name) || len(n.name) > 64 {
			t.Errorf("%v -> %q: not ^[A-Za-z0-9_-]{1,64}$", k, n.name)
		}
		low := strings.ToLower(n.name)
		if other, dup := seen[low]; dup {
			t.Errorf("%v and %v both exposed as %q (ignoring case)", k, other, n.name)
		}
		seen[low] = k
		for _, b := range builtin {
			if strings.EqualFold(b, n.name) {
				t.Errorf("%v takes the built-in name %q", k, b)
			}
		}
	}
	// The byte-order first of a case clash keeps the plain name.
	if got[toolKey{"GitHub", "search"}].name != "GitHub__search" {
		t.Errorf("GitHub__search renamed to %q", got[toolKey{"GitHub", "search"}].name)
	}
	if n := got[toolKey{"github", "search"}]; !strings.HasPrefix(n.name, "github__search_") || !strings.Contains(n.note, "GitHub") {
		t.Errorf("github/search -> %+v, want a hashed name and a note naming GitHub's", n)
	}
	if n := got[toolKey{"fs", "bash"}]; !strings.Contains(n.note, "built-in tool FS__BASH") {
		t.Errorf("fs/bash note %q", n.note)
	}
	if n := got[toolKey{"fs", "read_file"}]; n.name != "fs__read_file" || n.note != "" {
		t.Errorf("fs/read_file -> %+v, want the plain name", n)
	}
	// Determinism: the same set in any order gives the same names.
	for range 20 {
		shuffled := append([]toolKey(nil), keys...)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again := assignNames(builtin, shuffled, 64)
		for k, v := range got {
			if again[k] != v {
				t.Fatalf("%v: %+v, then %+v in another order", k, v, again[k])
			}
		}
	}
	// A smaller limit (a client that adds its own prefix).
	small := assignNames(nil, keys, 20)
	for k, n := range small {
		if len(n.name) > 20 || !validName.MatchString(n.name) {
			t.Errorf("limit 20: %v -> %q", k, n.name)
		}
	}
}
