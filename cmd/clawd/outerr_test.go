package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestLostOutputIsRuntimeError: a command whose output cannot be written
// exits 1 and says so, whether or not it checked its writes (version,
// mcp list and mcp show did not, and exited 0 with nothing printed).
func TestLostOutputIsRuntimeError(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, args := range [][]string{
		{"version"},
		{"version", "--json"},
		{"mcp", "list"},
		{"mcp", "show", "clawd"},
		{"trust", "list"},
	} {
		var stderr strings.Builder
		if code := runWith(args, failingWriter{}, &stderr); code != 1 || !strings.Contains(stderr.String(), "no space left") {
			t.Errorf("clawd %v: exit %d: %s", args, code, stderr.String())
		}
	}
	if code := runWith([]string{"version"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("version: exit %d", code)
	}
}
