// Package clawdtest holds what the binary-level test packages (test/e2e,
// test/chain, test/transport) share: building clawd once per package and
// the environment that points every path clawd derives into a test's home.
package clawdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main builds clawd into a temporary directory, stores its path in *bin,
// runs the package's tests and removes the binary. It returns the exit
// code for os.Exit. The directory is world-readable: one test runs the
// binary as another user.
func Main(m *testing.M, bin *string) int {
	dir, err := os.MkdirTemp("", "clawd-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	*bin = filepath.Join(dir, "clawd")
	build := exec.Command("go", "build", "-o", *bin, "github.com/clawde/clawd/cmd/clawd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building clawd:", err)
		return 1
	}
	return m.Run()
}

// Environ is a child environment in which clawd's config, data and runtime
// directories all lie under home (config.DefaultPaths derives them from
// these variables), plus the caller's PATH.
func Environ(home, runtimeDir string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_RUNTIME_DIR=" + runtimeDir,
	}
}
