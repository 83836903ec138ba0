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

// Review cases: a scheme deno and bun fetch even when a file of that name
// exists, bun's own commands, node's test runner, and interpreter names
// the name rules missed.
func TestLaunchReviewHoles(t *testing.T) {
	fakeProgs(t, "node", "deno", "bun", "python3.13t", "python3-dbg")
	work := t.TempDir()
	for _, f := range []string{"x.js", "x.py", "x.ts", "npm:cowsay", "jsr:x", "test", "repl"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("// "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(work, "https:evil.example"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "https:evil.example", "x.ts"), []byte("//\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"deno", "run", "npm:cowsay"}, unpinned: "from the network"},
		{cmd: []string{"deno", "run", "jsr:x"}, unpinned: "from the network"},
		{cmd: []string{"deno", "run", "https:evil.example/x.ts"}, unpinned: "from the network"},
		{cmd: []string{"bun", "npm:cowsay"}, unpinned: "from the network"},
		{cmd: []string{"bun", "test"}, unpinned: "is a bun command"},
		{cmd: []string{"bun", "repl"}, unpinned: "is a bun command"},
		{cmd: []string{"node", "--test", "x.js", "other.js"}, unpinned: "--test"},
		{cmd: []string{"python3.13t", "x.py"}, script: "x.py"},
		{cmd: []string{"python3-dbg", "x.py"}, script: "x.py"},
		{cmd: []string{"deno", "run", "x.ts"}, script: "x.ts"},
		{cmd: []string{"bun", "x.ts"}, script: "x.ts"},
	})
}

// bun reads its file argument as the name of a package.json script first
// (the nearest package.json up from the working directory), and runs
// that script's shell command in place of the file, unless the argument
// starts with "." or is absolute, or (without `run`) ends in an extension
// bun runs: the server could add such a script to its own package.json.
func TestBunPackageScriptBeforeFile(t *testing.T) {
	fakeProgs(t, "bun")
	work := t.TempDir()
	for _, f := range []string{"x.ts", "x.mjs", "server", "x.txt", "X.TS"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("// "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"bun", "run", "x.ts"}, unpinned: "`./x.ts`"},
		{cmd: []string{"bun", "run", "--smol", "x.ts"}, unpinned: "package.json script"},
		{cmd: []string{"bun", "server"}, unpinned: "`./server`"},
		{cmd: []string{"bun", "x.txt"}, unpinned: "`./x.txt`"},
		// bun compares the extension as it is spelt.
		{cmd: []string{"bun", "X.TS"}, unpinned: "`./X.TS`"},
		{cmd: []string{"bun", "run", "./x.ts"}, script: "x.ts"},
		{cmd: []string{"bun", "run", filepath.Join(work, "x.ts")}, script: "x.ts"},
		{cmd: []string{"bun", "./server"}, script: "server"},
		{cmd: []string{"bun", "x.ts"}, script: "x.ts"},
		{cmd: []string{"bun", "x.mjs"}, script: "x.mjs"},
	})
}
