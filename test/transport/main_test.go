//go:build linux || darwin

// Package transport_e2e runs the clawd binary end to end over its network
// transports: `clawd serve` on a unix socket and on loopback HTTP, `clawd
// connect`, the CLI client and token rotation. Each test gets its own HOME
// and XDG directories, so nothing touches the user's files.
package transport_e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// clawdBin is the binary under test, built once by TestMain.
var clawdBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "clawd-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Readable by every user: one test runs the binary as nobody.
	os.Chmod(dir, 0o755)
	clawdBin = filepath.Join(dir, "clawd")
	build := exec.Command("go", "build", "-o", clawdBin, "github.com/clawde/clawd/cmd/clawd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building clawd:", err)
		return 1
	}
	return m.Run()
}
