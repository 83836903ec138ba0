package clawdtest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
)

// BuildFakeUpstream builds internal/upstream's fake stdio MCP server (the
// misbehaving upstream of the gateway's tests: banners, hangs, crashes,
// grandchildren, rug pulls; its flags say which) as dir/name and returns
// the path. It must run from a directory inside the module, as a test's
// working directory is.
func BuildFakeUpstream(dir, name string) (string, error) {
	bin := filepath.Join(dir, name)
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(gobin, "build", "-o", bin, "github.com/clawde/clawd/internal/upstream/testdata/fakeserver").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the fake upstream: %v\n%s", err, out)
	}
	return bin, nil
}
