package clawdtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// NPMUpstreams are the MCP servers from npm that the gateway's end-to-end
// tests and benchmarks connect clawd to, pinned to the versions they were
// written against. .ci/run installs them into NPMDir together with
// test/clients' npmPackages; NPMPackage installs them on first use when a
// developer runs the tests without .ci/run.
const NPMUpstreams = "@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31"

// npmInstallTimeout bounds an install NPMPackage runs itself.
const npmInstallTimeout = 5 * time.Minute

// NPMDir is the npm prefix the test setup installs into: $CLAWD_TEST_NPM,
// default $HOME/.cache/clawd-test-npm (shared with test/clients).
func NPMDir() string {
	if dir := os.Getenv("CLAWD_TEST_NPM"); dir != "" {
		return dir
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "clawd-test-npm")
}

// NPMPackage returns the directory of the package name (one of
// NPMUpstreams) at its pinned version in NPMDir. When it is missing or at
// another version, it installs NPMUpstreams there with npm first (one
// install at a time across test processes). It skips the test, saying so,
// only when npm is not installed or the install fails (no registry).
func NPMPackage(t testing.TB, name string) string {
	t.Helper()
	want := ""
	for _, spec := range strings.Fields(NPMUpstreams) {
		if i := strings.LastIndex(spec, "@"); i > 0 && spec[:i] == name {
			want = spec[i+1:]
		}
	}
	if want == "" {
		t.Fatalf("NPMPackage: %s is not in NPMUpstreams (%s)", name, NPMUpstreams)
	}
	dir := NPMDir()
	pkg := filepath.Join(dir, "node_modules", filepath.FromSlash(name))
	if npmVersion(pkg) == want {
		return pkg
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("%s@%s is not installed in %s and there is no npm to install it (%v)", name, want, dir, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("no node to run %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock := lockFile(t, filepath.Join(dir, ".clawd-test-install.lock"))
	defer unlock()
	if npmVersion(pkg) == want { // another test process installed it meanwhile
		return pkg
	}
	ctx, cancel := context.WithTimeout(context.Background(), npmInstallTimeout)
	defer cancel()
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, strings.Fields(NPMUpstreams)...)
	out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput()
	if err != nil {
		t.Skipf("npm could not install %s (is the npm registry reachable?): %v\n%s", NPMUpstreams, err, out)
	}
	if got := npmVersion(pkg); got != want {
		t.Fatalf("npm installed %s at version %q, want %s", name, got, want)
	}
	return pkg
}

// npmVersion is the version in dir/package.json, "" if there is none.
func npmVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &p, json.RejectUnknownMembers(false)) != nil {
		return ""
	}
	return p.Version
}
