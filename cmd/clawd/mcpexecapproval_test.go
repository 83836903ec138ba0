package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/store"
)

// What approval shows before it asks comes partly from files anyone who
// can write the project may have written (an npm lockfile's integrity):
// none of it reaches the terminal raw, where it could rewrite the lines
// the user is about to say yes to.
func TestApproveServerShowsPinsEscaped(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for npx")
	}
	bin, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	lock := `{"packages":{"node_modules/evil":{"version":"1.0.0","integrity":"sha512-AAAA\u001b[2K\rsha512-looks-fine\u0007"}}}`
	if err := os.MkdirAll(filepath.Join(ws, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "node_modules", ".package-lock.json"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
	s := store.MCPServer{Name: "np", Transport: store.TransportStdio, Command: "npx", Args: []string{"-y", "evil@1.0.0"}, Cwd: ws, Enabled: true}
	var out strings.Builder
	_, ok, err := approveServer(nil, s, approval{in: strings.NewReader("n\n"), out: &out})
	if ok || err != nil {
		t.Fatalf("answered n: approved %v, err %v", ok, err)
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\r\x07") {
		t.Errorf("a raw control character from the lockfile reached the terminal:\n%q", got)
	}
	if !strings.Contains(got, `sha512-AAAA\x1b[2K\x0dsha512-looks-fine\x07`) {
		t.Errorf("the integrity is not shown escaped:\n%s", got)
	}
}
