//go:build unix

package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A script named by a path of /dev or /proc (or a link leading there) is
// refused: it resolves per process, so clawd would hash its own stdin or
// descriptor while the server reads its own, clawd's requests on stdin.
// Links to an ordinary file still pin that file.
func TestScriptPathsPerProcessRefused(t *testing.T) {
	fakeProgs(t, "node", "python3", "bash")
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "x.js"), []byte("// x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"stdin.js": "/dev/stdin",
		"fd0.js":   "/proc/self/fd/0",
		"fds":      "/dev/fd",
		"rel.js":   "x.js",
		"hop.js":   "stdin.js",
	} {
		if err := os.Symlink(target, filepath.Join(work, link)); err != nil {
			t.Fatal(err)
		}
	}
	// A descriptor of clawd's own that is an ordinary file: resolved in
	// clawd, the path pinned that file; the server has no such descriptor.
	f, err := os.Open(filepath.Join(work, "x.js"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ownFD := fmt.Sprintf("/dev/fd/%d", f.Fd())
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"node", ownFD}, unpinned: "/proc or /dev"},
		{cmd: []string{"node", "/dev/stdin"}, unpinned: "/proc or /dev"},
		{cmd: []string{"node", "/proc/self/fd/0"}, unpinned: "/proc or /dev"},
		{cmd: []string{"python3", "/dev/fd/0"}, unpinned: "/proc or /dev"},
		{cmd: []string{"bash", "/dev/stdin"}, unpinned: "/proc or /dev"},
		{cmd: []string{"node", "stdin.js"}, unpinned: "/proc or /dev"},
		{cmd: []string{"node", "fd0.js"}, unpinned: "/proc or /dev"},
		{cmd: []string{"node", "fds/0"}, unpinned: "/proc or /dev"},
		{cmd: []string{"node", "hop.js"}, unpinned: "/proc or /dev"},
		{cmd: []string{"node", "rel.js"}, script: "x.js"},
		{cmd: []string{"node", "x.js"}, script: "x.js"},
	})
}
