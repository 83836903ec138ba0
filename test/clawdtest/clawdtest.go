// Package clawdtest is the one harness of the binary-level test packages
// (test/e2e, test/chain, test/transport, test/clients):
//
//   - Main builds clawd once per package.
//   - Env is an isolated user (home, workspace, runtime dir; see Environ)
//     that runs clawd with a bound (Run), starts daemons and waits for them
//     (Serve, Daemon, State) and knows clawd's files (ConfigFile, DBFile,
//     ReadToken).
//   - Client speaks NDJSON JSON-RPC over a child's stdio (Env.Stdio,
//     StartChild), a unix socket (DialUnix) or any pipes; HTTP speaks it
//     over Streamable HTTP POST. Both send raw bytes when a test needs
//     malformed input, and every read is bounded so a hung server fails
//     the test instead of hanging it.
//   - ReadTxtar reads fixed exchanges kept in testdata.
//
// Children and daemons are ended by the test's cleanup. Real MCP clients
// (the go-sdk) stay real: BearerClient only gives them the token header.
// The package imports internal/config (WorkspaceID), so that package's own
// tests cannot import this one.
package clawdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/clawde/clawd/internal/support/race"
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
	args := []string{"build", "-o", *bin}
	if race.Enabled {
		// Under go test -race, clawd runs with the race detector too and
		// writes its reports to files (see raceEnv), which fail the run.
		args = append(args, "-race")
		raceLogs = filepath.Join(dir, "race")
		if err := os.Mkdir(raceLogs, 0o777); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.Chmod(raceLogs, 0o777)      // one test runs clawd as another user
		os.Setenv("GORACE", raceEnv()) // for children given os.Environ()
	}
	build := exec.Command("go", append(args, "github.com/clawde/clawd/cmd/clawd")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building clawd:", err)
		return 1
	}
	code := m.Run()
	if raceLogs != "" && reportRaces(raceLogs) && code == 0 {
		code = 1
	}
	return code
}

// raceLogs is the directory race-detector builds of clawd write their
// reports to, "" when the tests do not run under the race detector.
var raceLogs string

// raceEnv is GORACE for clawd's children: reports go to files in raceLogs
// rather than to a stderr that a test may discard or a daemon may not have.
func raceEnv() string {
	return "log_path=" + filepath.Join(raceLogs, "report")
}

// reportRaces copies every race report in dir to stderr and reports
// whether there was one.
func reportRaces(dir string) bool {
	entries, _ := os.ReadDir(dir)
	found := false
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil || len(b) == 0 {
			continue
		}
		found = true
		fmt.Fprintf(os.Stderr, "clawd (built with -race) reported in %s:\n%s\n", e.Name(), b)
	}
	return found
}

// Environ is a child environment in which clawd's config, data and runtime
// directories all lie under home (config.DefaultPaths derives them from
// these variables), plus the caller's PATH.
func Environ(home, runtimeDir string) []string {
	vars := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_RUNTIME_DIR=" + runtimeDir,
	}
	if raceLogs != "" {
		vars = append(vars, "GORACE="+raceEnv())
	}
	return vars
}
