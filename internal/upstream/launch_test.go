//go:build unix

package upstream

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// approvals is a verifier like the daemon's: an executable hash and, for
// an interpreter, a script hash must be approved; an unpinnable command is
// refused.
type approvals struct {
	mu      sync.Mutex
	exec    map[string]bool
	scripts map[string]bool
	checked []Launch
}

func (a *approvals) verify(server string, l Launch) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.checked = append(a.checked, l)
	if l.Unpinned != "" {
		return errors.New("supply_chain_unverified: " + l.Unpinned)
	}
	if !a.exec[l.ExecSHA256] || (l.Script != "" && !a.scripts[l.ScriptSHA256]) {
		return errors.New("supply_chain_unverified: not approved; if you trust it: " + l.AllowLine(server))
	}
	return nil
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

func fileSum(t *testing.T, p string) string {
	t.Helper()
	s, err := hashPath(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// renameOver replaces path with a new file of content, the way an update
// (or an attacker with write access to the directory) does.
func renameOver(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".swap"
	if err := os.WriteFile(tmp, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// The executable is swapped after it was hashed and approved and before
// it is executed (the hook runs in exactly that window): the approved
// binary runs, the swapped one never does. On Linux the descriptor that
// was hashed is executed; elsewhere the spawn must be refused instead.
// After that, the next spawn hashes the new file and refuses it.
func TestExecutableSwappedBetweenCheckAndExec(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "server")
	copyFile(t, fakeBin, bin, 0o755)
	marker := filepath.Join(dir, "swapped-ran")
	evil := fmt.Sprintf("#!/bin/sh\ntouch %s\nexit 1\n", marker)
	a := &approvals{exec: map[string]bool{fileSum(t, bin): true}}

	var once sync.Once
	testHookBeforeExec = func(path string) {
		if path == bin {
			once.Do(func() { renameOver(t, bin, evil) })
		}
	}
	t.Cleanup(func() { testHookBeforeExec = nil })

	m, reg := newTestManager(t, Options{VerifyLaunch: a.verify})
	cfg := fake("swap")
	cfg.Command = bin
	m.Apply(context.Background(), []ServerConfig{cfg})
	if runtime.GOOS == "linux" {
		connected(t, m, "swap")
		if got := callText(t, reg, "swap__echo", `{"text":"approved"}`); !strings.Contains(got, "approved") {
			t.Fatalf("echo through the approved binary: %s", got)
		}
	} else {
		st := waitFor(t, m, "swap", 20*time.Second, "refused", func(s Status) bool {
			return s.State == StateUnavailable || s.State == StateError
		})
		if !strings.Contains(st.LastError, "replaced") {
			t.Errorf("last error %q; want the swap named", st.LastError)
		}
	}
	once.Do(func() {})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the swapped file ran")
	}
	// Next spawn: the new file is hashed, and refused before it runs.
	testHookBeforeExec = nil
	if err := m.Refresh(context.Background(), "swap"); err == nil {
		t.Fatal("Refresh with a swapped, unapproved executable succeeded")
	}
	st := waitFor(t, m, "swap", 20*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	if !strings.Contains(st.LastError, "supply_chain_unverified") || !strings.Contains(st.LastError, "clawd mcp allow --server swap --sha256 ") {
		t.Errorf("last error %q; want supply_chain_unverified and the allow line", st.LastError)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the swapped file ran on the next spawn")
	}
}

// fakeProgs puts executables named like interpreters and launchers in a
// directory on PATH, so ResolveLaunch's rules are tested without them
// installed. They are never run.
func fakeProgs(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		// Not a #! script, whose interpreter's env rules would apply too.
		if err := os.WriteFile(filepath.Join(dir, n), []byte("\x7fELF fake "+n+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

func TestResolveLaunchRules(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fake interpreters are shell scripts")
	}
	fakeProgs(t, "node", "python3", "python3.12", "bash", "sh", "deno", "bun", "uvx", "pnpm", "bunx", "npx", "ruby", "perl", "php", "mytool", "env", "nice", "sudo",
		"fish", "zsh", "tcsh", "pwsh", "powershell", "wsl", "systemd-run", "flock", "strace", "go", "cargo", "make", "script", "socat", "tmux")
	work := t.TempDir()
	for _, f := range []string{"x.js", "x.py", "x.sh", "x.ts", "x.rb", "x.pl", "x.php"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("// "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(work, "adir"), 0o755)
	cases := []launchCase{
		{cmd: []string{"mytool", "--flag", "x.js"}},
		{cmd: []string{"node", "x.js", "--port", "1"}, script: "x.js"},
		{cmd: []string{"node", "--enable-source-maps", "--max-old-space-size=512", "x.js"}, script: "x.js"},
		{cmd: []string{"node", "--title", "srv", "x.js"}, script: "x.js"},
		{cmd: []string{"node", "-e", "require('x')"}, unpinned: "`-e`"},
		{cmd: []string{"node", "-r", "./hook.js", "x.js"}, unpinned: "`-r`"},
		{cmd: []string{"node", "--import=./hook.mjs", "x.js"}, unpinned: "--import"},
		{cmd: []string{"node", "--env-file=.env", "x.js"}, unpinned: "--env-file"},
		{cmd: []string{"node", "--env-file", ".env", "x.js"}, unpinned: "--env-file"},
		{cmd: []string{"node", "--experimental-config-file", "node.config.json", "x.js"}, unpinned: "--experimental-config-file"},
		// Node reads underscores in an option's name as dashes.
		{cmd: []string{"node", "--experimental_loader=./hook.mjs", "x.js"}, unpinned: "--experimental_loader"},
		{cmd: []string{"node", "--env_file", ".env", "x.js"}, unpinned: "--env_file"},
		{cmd: []string{"node", "--max_old_space_size=512", "--enable_source_maps", "x.js"}, script: "x.js"},
		// OpenSSL's config can load libraries; a snapshot holds code; a
		// watched file runs again once changed; --run runs a package
		// script.
		{cmd: []string{"node", "--openssl-config=/tmp/o.cnf", "x.js"}, unpinned: "--openssl-config"},
		{cmd: []string{"node", "--snapshot-blob", "snap.blob", "x.js"}, unpinned: "--snapshot-blob"},
		{cmd: []string{"node", "--watch", "x.js"}, unpinned: "--watch"},
		{cmd: []string{"node", "--watch-path=.", "x.js"}, unpinned: "--watch-path"},
		{cmd: []string{"node", "--run", "x.js"}, unpinned: "--run"},
		{cmd: []string{"node", "--test", "--test-global-setup=setup.js", "x.js"}, unpinned: "--test-global-setup"},
		{cmd: []string{"node"}, unpinned: "no script file"},
		{cmd: []string{"node", "adir"}, unpinned: "not a regular file"},
		{cmd: []string{"node", "missing.js"}, err: "missing.js"},
		{cmd: []string{"python3", "-u", "-W", "ignore", "x.py"}, script: "x.py"},
		{cmd: []string{"python3.12", "x.py"}, script: "x.py"},
		{cmd: []string{"python3", "-m", "mcp_server_git"}, unpinned: "`-m`"},
		{cmd: []string{"python3", "-c", "import os"}, unpinned: "`-c`"},
		{cmd: []string{"bash", "-e", "x.sh"}, script: "x.sh"},
		{cmd: []string{"sh", "-c", "echo hi"}, unpinned: "`-c`"},
		{cmd: []string{"bash", "-ec", "echo hi"}, unpinned: "`-ec`"},
		// One-letter options grouped: each letter counts, up to one that
		// takes a value (the rest of the group, or the next argument).
		{cmd: []string{"python3", "-Im", "mod"}, unpinned: "`-Im`"},
		{cmd: []string{"python3", "-Bc", "import os"}, unpinned: "`-Bc`"},
		{cmd: []string{"python3", "-Wignore", "x.py"}, script: "x.py"},
		{cmd: []string{"python3", "-uW", "ignore", "x.py"}, script: "x.py"},
		{cmd: []string{"python3", "-uWi", "x.py"}, script: "x.py"},
		{cmd: []string{"ruby", "-we", "puts 1"}, unpinned: "`-we`"},
		{cmd: []string{"node", "-pe", "1"}, unpinned: "`-pe`"},
		{cmd: []string{"bash", "-xs"}, unpinned: "`-xs`"},
		{cmd: []string{"bash", "-oc", "posix", "echo hi"}, unpinned: "`-oc`"},
		{cmd: []string{"bash", "-eo", "pipefail", "x.sh"}, script: "x.sh"},
		{cmd: []string{"ruby", "x.rb"}, script: "x.rb"},
		{cmd: []string{"deno", "run", "--allow-read", "-c", "deno.json", "x.ts"}, script: "x.ts"},
		{cmd: []string{"deno", "run", "https://example.com/x.ts"}, unpinned: "from the network"},
		{cmd: []string{"deno", "eval", "1"}, unpinned: "deno run"},
		{cmd: []string{"bun", "run", "./x.ts"}, script: "x.ts"},
		{cmd: []string{"bun", "--smol", "x.ts"}, script: "x.ts"},
		{cmd: []string{"bun", "--preload", "./p.ts", "x.ts"}, unpinned: "--preload"},
		{cmd: []string{"bun", "--require=./p.ts", "x.ts"}, unpinned: "--require"},
		{cmd: []string{"bun", "--hot", "x.ts"}, unpinned: "--hot"},
		{cmd: []string{"bun", "run", "--watch", "./x.ts"}, unpinned: "--watch"},
		{cmd: []string{"bun", "-c", "bunfig.toml", "x.ts"}, unpinned: "`-c`"},
		// bun would read x.ts from that directory, not the one pinned.
		{cmd: []string{"bun", "--cwd", "/tmp", "x.ts"}, unpinned: "--cwd"},
		{cmd: []string{"deno", "run", "--preload=./p.ts", "x.ts"}, unpinned: "--preload"},
		{cmd: []string{"deno", "run", "--import", "./p.ts", "x.ts"}, unpinned: "--import"},
		{cmd: []string{"deno", "run", "--watch", "x.ts"}, unpinned: "--watch"},
		{cmd: []string{"deno", "run", "--watch-hmr=.", "x.ts"}, unpinned: "--watch-hmr"},
		{cmd: []string{"bun", "x", "pkg"}, unpinned: "`bun x`"},
		{cmd: []string{"uvx", "mcp-server-git"}, unpinned: "cannot pin"},
		{cmd: []string{"pnpm", "dlx", "pkg"}, unpinned: "cannot pin"},
		{cmd: []string{"bunx", "pkg"}, unpinned: "cannot pin"},
		{cmd: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}, unpinned: "floating spec"},
		{cmd: []string{"npx", "pkg@latest"}, unpinned: "floating spec"},
		{cmd: []string{"npx", "pkg@^1.2.0"}, unpinned: "floating spec"},
		{cmd: []string{"npx", "github:user/repo"}, unpinned: "not a registry package"},
		{cmd: []string{"npx", "-p", "pkg@1.0.0", "bin"}, unpinned: "option -p"},
		{cmd: []string{"npx"}, unpinned: "no package"},
		{cmd: []string{"env", "npx", "-y", "pkg"}, unpinned: "starts the program named in its arguments"},
		{cmd: []string{"env", "FOO=1", "node", "x.js"}, unpinned: "name that program as the command"},
		{cmd: []string{"nice", "-n", "5", "mytool"}, unpinned: "starts the program"},
		{cmd: []string{"sudo", "mytool"}, unpinned: "starts the program"},
		{cmd: []string{"pwsh", "-c", "npx -y pkg"}, unpinned: "starts the program"},
		{cmd: []string{"powershell", "-Command", "npx -y pkg"}, unpinned: "starts the program"},
		{cmd: []string{"wsl", "npx", "-y", "pkg"}, unpinned: "starts the program"},
		{cmd: []string{"systemd-run", "--user", "--pipe", "mytool"}, unpinned: "starts the program"},
		{cmd: []string{"flock", "/tmp/l", "mytool"}, unpinned: "starts the program"},
		{cmd: []string{"strace", "-f", "mytool"}, unpinned: "starts the program"},
		{cmd: []string{"script", "-qc", "npx -y pkg", "/dev/null"}, unpinned: "starts the program"},
		{cmd: []string{"socat", "STDIO", "EXEC:mytool"}, unpinned: "starts the program"},
		{cmd: []string{"tmux", "new", "mytool"}, unpinned: "starts the program"},
		// Build tools build (or fetch) what they run: only the tool
		// would be pinned, never the sources.
		{cmd: []string{"go", "run", "./cmd/server"}, unpinned: "go build -o BIN"},
		{cmd: []string{"go", "run", "example.com/srv@v1.2.3"}, unpinned: "builds (and may fetch)"},
		{cmd: []string{"cargo", "run", "--release"}, unpinned: "builds (and may fetch)"},
		{cmd: []string{"make", "serve"}, unpinned: "builds (and may fetch)"},
		{cmd: []string{"fish", "-c", "npx -y pkg"}, unpinned: "`-c`"},
		{cmd: []string{"tcsh", "x.sh"}, script: "x.sh"},
	}
	cases = append(cases, scriptOptionCases...)
	cases = append(cases, inspectorCases...)
	t.Setenv("npm_config_cache", t.TempDir())
	checkLaunchCases(t, work, cases)
	// The floating spec's fix suggests the version installed here when
	// there is one.
	l, _ := ResolveLaunch(ServerConfig{Name: "s", Transport: TransportStdio, Command: "npx", Args: []string{"-y", "pkg"}, Cwd: work}, nil)
	if !strings.Contains(l.Unpinned, "npx -y pkg@VERSION") {
		t.Errorf("floating fix %q", l.Unpinned)
	}
}

// launchCase is a command and what ResolveLaunch must make of it in a
// working directory of test files.
type launchCase struct {
	cmd      []string
	env      map[string]string // the server's env
	script   string            // want this script pinned
	unpinned string            // want refused, the reason containing this
	err      string            // want an error containing this
}

func checkLaunchCases(t *testing.T, work string, cases []launchCase) {
	t.Helper()
	for _, tc := range cases {
		cfg := ServerConfig{Name: "s", Transport: TransportStdio, Command: tc.cmd[0], Args: tc.cmd[1:], Cwd: work}
		l, err := ResolveLaunch(cfg, tc.env)
		name := strings.Join(tc.cmd, " ")
		if tc.env != nil {
			name = fmt.Sprint(tc.env) + " " + name
		}
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v; want one naming %q", name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.unpinned != "":
			if !strings.Contains(l.Unpinned, tc.unpinned) {
				t.Errorf("%s: unpinned %q; want it refused naming %q", name, l.Unpinned, tc.unpinned)
			}
		default:
			if l.Unpinned != "" {
				t.Errorf("%s: refused: %s", name, l.Unpinned)
			}
			want := ""
			if tc.script != "" {
				want = filepath.Join(work, tc.script)
				if real, err := filepath.EvalSymlinks(want); err == nil {
					want = real
				}
			}
			if l.Script != want || (want != "" && l.ScriptSHA256 != fileSum(t, want)) {
				t.Errorf("%s: script %q (%s); want %q", name, l.Script, l.ScriptSHA256, want)
			}
		}
	}
}

// writeLock writes an npm hidden lockfile holding name@version.
func writeLock(t *testing.T, nodeModules, name, version, integrity string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(nodeModules, filepath.FromSlash(name)), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(nodeModules, filepath.FromSlash(name), "package.json"), []byte(`{"name":"`+name+`","version":"`+version+`"}`), 0o644)
	lock := fmt.Sprintf(`{"name":"x","lockfileVersion":3,"requires":true,"packages":{"node_modules/%s":{"version":"%s","resolved":"https://registry.npmjs.org/x","integrity":"%s"}}}`, name, version, integrity)
	if err := os.WriteFile(filepath.Join(nodeModules, ".package-lock.json"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
}

// npx NAME@VERSION is pinned from the npx cache npm would use (the
// directory named by the spec's SHA-512, as libnpmexec computes it), and
// from the project's own tree first when the package is installed there.
func TestNpxPinnedFromLockfiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fake npx is a shell script")
	}
	fakeProgs(t, "npx")
	cache := t.TempDir()
	spec := "@scope/srv@1.2.3"
	sum := sha512.Sum512([]byte(spec))
	npxDir := filepath.Join(cache, "_npx", hex.EncodeToString(sum[:])[:16])
	const cached = "sha512-Y2FjaGVkY2FjaGVkY2FjaGVkY2FjaGVkY2FjaGVkY2FjaGVk=="
	writeLock(t, filepath.Join(npxDir, "node_modules"), "@scope/srv", "1.2.3", cached)
	work := t.TempDir()
	cfg := ServerConfig{Name: "s", Transport: TransportStdio, Command: "npx", Args: []string{"-y", spec, "--root", "/x"}, Cwd: work}

	// The cache location comes from the server's own environment first.
	l, err := ResolveLaunch(cfg, map[string]string{"npm_config_cache": cache})
	if err != nil || l.Unpinned != "" {
		t.Fatalf("resolve: %v %s", err, l.Unpinned)
	}
	if l.Package != spec || l.Integrity != cached || l.Lockfile != filepath.Join(npxDir, "node_modules", ".package-lock.json") {
		t.Fatalf("pinned %q %q from %q", l.Package, l.Integrity, l.Lockfile)
	}
	if !strings.Contains(l.AllowLine("s"), "--package "+spec+" --integrity "+cached) {
		t.Errorf("allow line %q", l.AllowLine("s"))
	}
	// Another version is not in the cache: refused, with how to fetch it.
	cfg2 := cfg
	cfg2.Args = []string{"-y", "@scope/srv@1.2.4"}
	l, _ = ResolveLaunch(cfg2, map[string]string{"npm_config_cache": cache})
	if !strings.Contains(l.Unpinned, "not in npx's cache") || !strings.Contains(l.Unpinned, "npm exec --yes --package=@scope/srv@1.2.4 -- true") {
		t.Errorf("uncached version: %q", l.Unpinned)
	}
	// Installed in the project: npx takes that copy, so its lockfile is
	// the one read.
	const local = "sha512-bG9jYWxsb2NhbGxvY2FsbG9jYWxsb2NhbGxvY2FsbG9jYWw="
	os.WriteFile(filepath.Join(work, "package.json"), []byte(`{}`), 0o644)
	writeLock(t, filepath.Join(work, "node_modules"), "@scope/srv", "1.2.3", local)
	sub := filepath.Join(work, "sub")
	os.Mkdir(sub, 0o755)
	cfg.Cwd = sub // npm walks up to the project root
	l, err = ResolveLaunch(cfg, map[string]string{"npm_config_cache": cache})
	if err != nil || l.Integrity != local {
		t.Fatalf("project install: %v %q %s", err, l.Integrity, l.Unpinned)
	}
	// A floating spec's fix names the installed version.
	cfg.Args = []string{"-y", "@scope/srv"}
	l, _ = ResolveLaunch(cfg, map[string]string{"npm_config_cache": cache})
	if !strings.Contains(l.Unpinned, "npx -y @scope/srv@1.2.3 (the version installed here now)") {
		t.Errorf("floating fix %q", l.Unpinned)
	}
}

// A real npx run of a pinned package from npm's cache: npx itself is a #!
// script run by descriptor (node then reads it by its real path), the pin
// comes from the lockfile npm wrote, and the server connects.
func TestNpxPinnedRealPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npx")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	spec := "@modelcontextprotocol/server-everything@2026.8.31"
	fetch := exec.Command(npm, "exec", "--prefer-offline", "--yes", "--package="+spec, "--", "true")
	fetch.Dir = t.TempDir()
	if out, err := fetch.CombinedOutput(); err != nil {
		t.Skipf("npm could not fetch %s (npm or the registry is unreachable): %v\n%s", spec, err, out)
	}
	cfg := ServerConfig{Name: "everything", Transport: TransportStdio, Command: "npx", Args: []string{"-y", spec, "stdio"},
		Enabled: true, ConnectTimeout: 60 * time.Second, ReadTimeout: 30 * time.Second, Cwd: t.TempDir()}
	l, err := Inspect(cfg)
	if err != nil || l.Unpinned != "" {
		t.Fatalf("inspect: %v %s", err, l.Unpinned)
	}
	if l.Package != spec || !strings.HasPrefix(l.Integrity, "sha512-") {
		t.Fatalf("pinned %q %q", l.Package, l.Integrity)
	}
	a := &approvals{exec: map[string]bool{l.ExecSHA256: true}}
	pinned := func(server string, got Launch) error {
		if got.Package != l.Package || got.Integrity != l.Integrity {
			return fmt.Errorf("package %s %s is not the approved one", got.Package, got.Integrity)
		}
		return a.verify(server, got)
	}
	m, reg := newTestManager(t, Options{VerifyLaunch: pinned})
	m.Apply(context.Background(), []ServerConfig{cfg})
	waitFor(t, m, "everything", 90*time.Second, "connected", func(s Status) bool { return s.State == StateConnected })
	if got := callText(t, reg, "everything__echo", `{"message":"pinned"}`); !strings.Contains(got, "pinned") {
		t.Errorf("echo: %s", got)
	}
}

// Written in place (same inode) between the hash and the exec: executing
// the descriptor does not stop that, so the spawn compares the file's
// size and times after the exec and stops the child before any request.
func TestExecutableWrittenInPlaceBetweenCheckAndExec(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the replacement is a shell script")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "server")
	copyFile(t, fakeBin, bin, 0o755)
	a := &approvals{exec: map[string]bool{fileSum(t, bin): true}}
	var once sync.Once
	testHookBeforeExec = func(path string) {
		once.Do(func() {
			if err := os.WriteFile(path, []byte("#!/bin/sh\nsleep 30\n"), 0o755); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(func() { testHookBeforeExec = nil })
	m, _ := newTestManager(t, Options{VerifyLaunch: a.verify, MaxFailures: 1})
	cfg := fake("inplace")
	cfg.Command = bin
	m.Apply(context.Background(), []ServerConfig{cfg})
	st := waitFor(t, m, "inplace", 20*time.Second, "refused", func(s Status) bool {
		return strings.Contains(s.LastError, "written to between its check and its start") ||
			strings.Contains(s.LastError, "supply_chain_unverified")
	})
	if st.State == StateConnected {
		t.Fatalf("connected to a file written after its check: %+v", st)
	}
}

// countingHasher is a FileHasher that records the paths it hashed.
type countingHasher struct {
	mu    sync.Mutex
	paths []string
}

func (c *countingHasher) Sum(p string) (string, error) {
	c.mu.Lock()
	c.paths = append(c.paths, p)
	c.mu.Unlock()
	return plainHasher{}.Sum(p)
}

func (c *countingHasher) SumFile(f *os.File) (string, error) { return plainHasher{}.SumFile(f) }

func (c *countingHasher) count(p string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, q := range c.paths {
		if q == p {
			n++
		}
	}
	return n
}

// A spawn hashes an interpreter's script through Options.Hasher (in the
// daemon the cache the per-call check of that script shares), once, and
// applying the configuration hashes nothing: resolving the origin takes
// paths only.
func TestScriptHashedOnceThroughHasher(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("exec "+fakeBin+" \"$@\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(script); err == nil {
		script = real
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	h := &countingHasher{}
	m, _ := newTestManager(t, Options{Hasher: h})
	cfg := fake("script")
	cfg.Command, cfg.Args = sh, []string{script}
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "script")
	if n := h.count(script); n != 1 {
		t.Fatalf("the script was hashed %d times through Options.Hasher for one spawn; want 1 (hashed: %v)", n, h.paths)
	}
	m.mu.Lock()
	o := m.servers["script"].origin()
	m.mu.Unlock()
	if o.Script != script {
		t.Fatalf("origin script %q; want %q", o.Script, script)
	}
}

// A write into the executable in place between its check and its exec,
// with the modification time put back and the change time's move hidden
// behind a hard link or a rename over the name (which also move it), is
// still seen: the descriptor is hashed again and the process stopped
// before any request.
func TestExecutableWrittenInPlaceThenRelinked(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("on Linux the descriptor written to is the one executed")
	}
	for _, hide := range []string{"link", "rename"} {
		t.Run(hide, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "server")
			copyFile(t, fakeBin, bin, 0o755)
			fi, err := os.Stat(bin)
			if err != nil {
				t.Fatal(err)
			}
			a := &approvals{exec: map[string]bool{fileSum(t, bin): true}}
			head := "#!/bin/sh\nsleep 30\nexit 1\n"
			evil := head + strings.Repeat("#", int(fi.Size())-len(head))
			var once sync.Once
			testHookBeforeExec = func(path string) {
				once.Do(func() {
					f, err := os.OpenFile(path, os.O_WRONLY, 0)
					if err == nil {
						_, err = f.WriteAt([]byte(evil), 0)
						f.Close()
					}
					if err == nil {
						err = os.Chtimes(path, fi.ModTime(), fi.ModTime())
					}
					if err == nil && hide == "link" {
						err = os.Link(path, path+".link")
					}
					if err == nil && hide == "rename" {
						copyFile(t, fakeBin, path+".new", 0o755)
						err = os.Rename(path+".new", path)
					}
					if err != nil {
						t.Error(err)
					}
				})
			}
			t.Cleanup(func() { testHookBeforeExec = nil })
			m, _ := newTestManager(t, Options{VerifyLaunch: a.verify, MaxFailures: 1})
			cfg := fake("relinked")
			cfg.Command = bin
			m.Apply(context.Background(), []ServerConfig{cfg})
			st := waitFor(t, m, "relinked", 20*time.Second, "stopped", func(s Status) bool { return s.LastError != "" })
			if !strings.Contains(st.LastError, "written to between its check and its start") {
				t.Fatalf("last error %q; want the write named (state %s)", st.LastError, st.State)
			}
		})
	}
}

// A FIFO put where a server's program (or script) was does not block the
// spawn until a writer comes: it is refused as not a regular file, at once.
func TestHashRefusesAFIFOAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server")
	if err := unix.Mkfifo(path, 0o700); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 2)
	go func() {
		f, _, _, err := openHashed(plainHasher{}, path)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	go func() { _, err := plainHasher{}.Sum(path); done <- err }()
	for i := 0; i < 2; i++ {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("hashing a FIFO: %v, want a refusal naming it not a regular file", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("hashing a FIFO blocked")
		}
	}
}

// scriptOptionCases are perl's, ruby's and php's options, each read with
// its own table: what loads a module or a debugger, changes the directory
// the script is looked up in, or runs code given on the command line is
// refused; what only sets a value passes.
var scriptOptionCases = []launchCase{
	// perl: -M/-m load a module (-M-Foo too: "no Foo" loads it), -d the
	// debugger or a Devel:: module, -F's pattern is put into the code it
	// runs, -S looks the script up on PATH instead of where it was pinned.
	{cmd: []string{"perl", "-MFoo", "x.pl"}, unpinned: "`-MFoo`"},
	{cmd: []string{"perl", "-mFoo", "x.pl"}, unpinned: "`-mFoo`"},
	{cmd: []string{"perl", "-M-Foo", "x.pl"}, unpinned: "`-M-Foo`"},
	{cmd: []string{"perl", "-d:Foo", "x.pl"}, unpinned: "`-d:Foo`"},
	{cmd: []string{"perl", "-dt", "x.pl"}, unpinned: "`-dt`"},
	{cmd: []string{"perl", "-wd", "x.pl"}, unpinned: "`-wd`"},
	{cmd: []string{"perl", "-E", "say 1"}, unpinned: "`-E`"},
	{cmd: []string{"perl", "-F/(?{system 1})/", "-an", "x.pl"}, unpinned: "-F"},
	{cmd: []string{"perl", "-S", "x.pl"}, unpinned: "`-S`"},
	// -x still runs the pinned file (from its #!perl line); -xDIR opens
	// it first, then changes directory. -I only adds a search path.
	{cmd: []string{"perl", "-x", "x.pl"}, script: "x.pl"},
	{cmd: []string{"perl", "-xadir", "x.pl"}, script: "x.pl"},
	{cmd: []string{"perl", "-I", "adir", "x.pl"}, script: "x.pl"},
	{cmd: []string{"perl", "-Iadir", "-w", "x.pl"}, script: "x.pl"},
	// Attached values are not read as options: -CSDA's S is not -S,
	// -i.bak's a not -a.
	{cmd: []string{"perl", "-CSDA", "-i.bak", "-l", "-0777", "x.pl"}, script: "x.pl"},
	// -n/-p wrap the pinned script in a loop over its input: still only
	// its code runs.
	{cmd: []string{"perl", "-n", "x.pl"}, script: "x.pl"},
	{cmd: []string{"perl", "-lane", "print"}, unpinned: "`-lane`"},
	{cmd: []string{"perl", "-l0ne", "print"}, unpinned: "`-l0ne`"},
	{cmd: []string{"perl", "-0x1Fn", "x.pl"}, script: "x.pl"},
	// ruby: -C/-X and -xDIR change directory before the script is read,
	// -S looks it up on PATH, -r requires a library.
	{cmd: []string{"ruby", "-C", "adir", "x.rb"}, unpinned: "`-C`"},
	{cmd: []string{"ruby", "-Cadir", "x.rb"}, unpinned: "`-Cadir`"},
	{cmd: []string{"ruby", "-X", "adir", "x.rb"}, unpinned: "`-X`"},
	{cmd: []string{"ruby", "-xadir", "x.rb"}, unpinned: "`-xadir`"},
	{cmd: []string{"ruby", "-S", "x.rb"}, unpinned: "`-S`"},
	{cmd: []string{"ruby", "-r", "json", "x.rb"}, unpinned: "`-r`"},
	{cmd: []string{"ruby", "-rjson", "x.rb"}, unpinned: "`-rjson`"},
	{cmd: []string{"ruby", "-wrjson", "x.rb"}, unpinned: "`-wrjson`"},
	{cmd: []string{"ruby", "-x", "x.rb"}, script: "x.rb"},
	{cmd: []string{"ruby", "-I", "adir", "-E", "UTF-8", "x.rb"}, script: "x.rb"},
	{cmd: []string{"ruby", "--disable", "gems", "--enable=frozen-string-literal", "x.rb"}, script: "x.rb"},
	{cmd: []string{"ruby", "-n", "x.rb"}, script: "x.rb"},
	{cmd: []string{"ruby", "-W:no-deprecated", "-pa", "x.rb"}, script: "x.rb"},
	// ruby's -W takes one digit and goes on reading options (-WS is -W
	// -S); its -0 takes no x (-0xadir is -0 -xadir).
	{cmd: []string{"ruby", "-WS", "x.rb"}, unpinned: "after -W"},
	{cmd: []string{"ruby", "-W2", "x.rb"}, script: "x.rb"},
	// python imports a warning category's module (-W) before the script;
	// -X pycache_prefix names a cache of compiled code.
	{cmd: []string{"python3", "-W", "ignore::evilmod.W", "x.py"}, unpinned: "evilmod"},
	{cmd: []string{"python3", "-Wignore::evilmod.W", "x.py"}, unpinned: "evilmod"},
	{cmd: []string{"python3", "-X", "pycache_prefix=/tmp/pyc", "x.py"}, unpinned: "pycache_prefix"},
	{cmd: []string{"python3", "-W", "ignore::DeprecationWarning", "-X", "utf8", "x.py"}, script: "x.py"},
	{cmd: []string{"ruby", "-0xadir", "x.rb"}, unpinned: "`-xadir`"},
	// perl reads further options after a blank inside a value.
	{cmd: []string{"perl", "-i.bak -MEvil", "x.pl"}, unpinned: "after a blank"},
	{cmd: []string{"perl", "-CSDA -MEvil", "x.pl"}, unpinned: "after a blank"},
	// fish runs -C/--init-command and --command; zsh reads its commands
	// from stdin with the shinstdin or interactive option.
	{cmd: []string{"fish", "-C", "echo", "x.fish"}, unpinned: "`-C`"},
	{cmd: []string{"fish", "--init-command=echo", "x.fish"}, unpinned: "--init-command"},
	{cmd: []string{"fish", "--command=echo", "x.fish"}, unpinned: "--command"},
	{cmd: []string{"zsh", "-o", "shinstdin", "x.sh"}, unpinned: "shinstdin"},
	{cmd: []string{"zsh", "-eo", "SHIN_STDIN", "x.sh"}, unpinned: "SHIN_STDIN"},
	{cmd: []string{"zsh", "--shinstdin", "x.sh"}, unpinned: "shinstdin"},
	{cmd: []string{"zsh", "-o", "interactive", "x.sh"}, unpinned: "interactive"},
	{cmd: []string{"zsh", "-o", "errexit", "x.sh"}, script: "x.sh"},
	// php: -d with a key that loads code (a script run before or after
	// this one, an extension, where extensions are loaded from), another
	// ini file (-c), code on the command line (-r, -B/-R/-F/-E), the
	// interactive shell, the built-in web server (it runs any file of its
	// document root) and a zend extension (-z) are refused.
	{cmd: []string{"php", "-d", "auto_prepend_file=/tmp/x.php", "x.php"}, unpinned: "auto_prepend_file"},
	{cmd: []string{"php", "-dauto_append_file=/tmp/x.php", "x.php"}, unpinned: "auto_append_file"},
	{cmd: []string{"php", "--define", "extension=/tmp/evil.so", "x.php"}, unpinned: "extension"},
	{cmd: []string{"php", "-d", " Zend_Extension = evil.so", "x.php"}, unpinned: "`-d Zend_Extension = evil.so`"},
	{cmd: []string{"php", "--define=extension_dir=/tmp", "x.php"}, unpinned: "extension_dir"},
	{cmd: []string{"php", "-nd", "opcache.preload=/tmp/p.php", "x.php"}, unpinned: "opcache.preload"},
	{cmd: []string{"php", "-c", "/tmp/php.ini", "x.php"}, unpinned: "`-c`"},
	{cmd: []string{"php", "--php-ini=/tmp/php.ini", "x.php"}, unpinned: "--php-ini"},
	{cmd: []string{"php", "-r", "echo 1;"}, unpinned: "`-r`"},
	{cmd: []string{"php", "-B", "echo 1;", "-R", "echo 2;"}, unpinned: "`-B`"},
	{cmd: []string{"php", "-F", "x.php"}, unpinned: "`-F`"},
	{cmd: []string{"php", "-a"}, unpinned: "`-a`"},
	{cmd: []string{"php", "-S", "localhost:8000", "x.php"}, unpinned: "`-S`"},
	{cmd: []string{"php", "-t", "adir", "x.php"}, unpinned: "`-t`"},
	{cmd: []string{"php", "-z", "/tmp/evil.so", "x.php"}, unpinned: "`-z`"},
	{cmd: []string{"php", "-d", "memory_limit=512M", "-ddisplay_errors", "-n", "x.php"}, script: "x.php"},
	{cmd: []string{"php", "-f", "x.php", "--", "arg"}, script: "x.php"},
	{cmd: []string{"php", "-q", "x.php"}, script: "x.php"},
}

// inspectorCases: node's, deno's and bun's --inspect, --inspect-brk and
// --inspect-wait open a debugger port any local process (any host, with a
// non-loopback address) can attach to and run code in the server.
// node's --inspect-port (and its alias --debug-port) only sets the port
// for a later activation and takes a separate value.
var inspectorCases = []launchCase{
	{cmd: []string{"node", "--inspect", "x.js"}, unpinned: "`--inspect`"},
	{cmd: []string{"node", "--inspect=0.0.0.0:9229", "x.js"}, unpinned: "--inspect"},
	{cmd: []string{"node", "--inspect-brk", "x.js"}, unpinned: "--inspect-brk"},
	{cmd: []string{"node", "--inspect-wait=9230", "x.js"}, unpinned: "--inspect-wait"},
	{cmd: []string{"node", "--inspect_brk", "x.js"}, unpinned: "--inspect_brk"},
	{cmd: []string{"node", "--inspect-port", "9230", "--debug-port", "9231", "x.js"}, script: "x.js"},
	{cmd: []string{"deno", "run", "--inspect", "x.ts"}, unpinned: "--inspect"},
	{cmd: []string{"deno", "run", "--inspect-brk=127.0.0.1:9229", "x.ts"}, unpinned: "--inspect-brk"},
	{cmd: []string{"deno", "run", "--inspect-wait", "x.ts"}, unpinned: "--inspect-wait"},
	{cmd: []string{"bun", "--inspect", "x.ts"}, unpinned: "--inspect"},
	{cmd: []string{"bun", "run", "--inspect-wait=localhost:4000/p", "x.ts"}, unpinned: "--inspect-wait"},
	{cmd: []string{"bun", "--inspect-brk", "x.ts"}, unpinned: "--inspect-brk"},
}
