//go:build unix

package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Programs that run a script file (or a command) named in their
// arguments, which clawd reads no options of: pinning only their own
// executable would let the script change unseen, so they are refused with
// the command that pins it. The interpreters clawd reads pin theirs.
func TestResolveLaunchScriptRunners(t *testing.T) {
	fakeProgs(t, "tsx", "ts-node", "ts-node-esm", "nodemon", "babel-node", "vite-node", "awk", "gawk", "mawk",
		"R", "tclsh", "guile", "julia", "py", "pyw", "pythonw", "pythonw3.13t", "jbang", "corepack", "kotlin", "scala-cli", "dart", "runghc", "erl", "poetry", "conda", "pipenv", "cross-env", "dotenv", "node", "bash", "sh", "zsh")
	work := t.TempDir()
	for _, f := range []string{"x.ts", "x.js", "x.awk", "x.R", "x.tcl", "x.py", "x.sh"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("# "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkLaunchCases(t, work, []launchCase{
		// TypeScript runners: node runs the file itself, pinned.
		{cmd: []string{"tsx", "x.ts"}, unpinned: "node --experimental-strip-types"},
		{cmd: []string{"tsx", "watch", "x.ts"}, unpinned: "tsx"},
		{cmd: []string{"ts-node", "x.ts"}, unpinned: "ts-node"},
		{cmd: []string{"ts-node-esm", "x.ts"}, unpinned: "ts-node-esm"},
		{cmd: []string{"babel-node", "x.js"}, unpinned: "babel-node"},
		{cmd: []string{"vite-node", "x.ts"}, unpinned: "vite-node"},
		{cmd: []string{"node", "--experimental-strip-types", "x.ts"}, script: "x.ts"},
		// A watcher runs the script again whenever it changes.
		{cmd: []string{"nodemon", "x.js"}, unpinned: "again"},
		// awk's program files (-f, gawk's -i and @include).
		{cmd: []string{"awk", "-f", "x.awk"}, unpinned: "awk"},
		{cmd: []string{"gawk", "-f", "x.awk"}, unpinned: "gawk"},
		{cmd: []string{"mawk", "-f", "x.awk"}, unpinned: "#!"},
		// Interpreters clawd has no option table for.
		{cmd: []string{"R", "-f", "x.R"}, unpinned: "Rscript FILE"},
		{cmd: []string{"tclsh", "x.tcl"}, unpinned: "tclsh"},
		{cmd: []string{"guile", "x.scm"}, unpinned: "guile"},
		{cmd: []string{"julia", "x.jl"}, unpinned: "julia"},
		// Windows' python launcher picks the interpreter by the script's
		// #! line or py.ini (a command of its choice); pythonw is python.
		{cmd: []string{"py", "-3.12", "x.py"}, unpinned: "python"},
		{cmd: []string{"pyw", "x.py"}, unpinned: "python"},
		{cmd: []string{"pythonw", "-u", "x.py"}, script: "x.py"},
		{cmd: []string{"pythonw3.13t", "x.py"}, script: "x.py"},
		// JVM and other toolchains that fetch or build what they run.
		{cmd: []string{"jbang", "org.example:srv:1.0"}, unpinned: "fetches and runs"},
		{cmd: []string{"corepack", "yarn", "dlx", "pkg"}, unpinned: "fetches and runs"},
		{cmd: []string{"kotlin", "srv.main.kts"}, unpinned: "builds (and may fetch)"},
		{cmd: []string{"scala-cli", "run", "srv.sc"}, unpinned: "builds (and may fetch)"},
		{cmd: []string{"dart", "run", "srv"}, unpinned: "builds (and may fetch)"},
		{cmd: []string{"runghc", "Srv.hs"}, unpinned: "runghc"},
		{cmd: []string{"erl", "-noshell", "-s", "srv"}, unpinned: "erl"},
		// Environment managers and npm's env helpers start a command.
		{cmd: []string{"poetry", "run", "python", "x.py"}, unpinned: "starts the program named in its arguments"},
		{cmd: []string{"conda", "run", "-n", "e", "python", "x.py"}, unpinned: "starts the program"},
		{cmd: []string{"pipenv", "run", "python", "x.py"}, unpinned: "starts the program"},
		{cmd: []string{"cross-env", "A=1", "node", "x.js"}, unpinned: "starts the program"},
		{cmd: []string{"dotenv", "--", "node", "x.js"}, unpinned: "starts the program"},
		// The shells' script is pinned.
		{cmd: []string{"sh", "x.sh"}, script: "x.sh"},
		{cmd: []string{"bash", "x.sh"}, script: "x.sh"},
		{cmd: []string{"zsh", "x.sh"}, script: "x.sh"},
	})
}

// npx NAME@VERSION pins the package, not what its program runs: a package
// whose program runs a script or a command named in its arguments (tsx,
// nodemon, cross-env, node itself) would run it unpinned.
func TestNpxScriptRunnerRefused(t *testing.T) {
	fakeProgs(t, "npx")
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "package.json"), []byte(`{}`), 0o644)
	os.WriteFile(filepath.Join(work, "x.ts"), []byte("1\n"), 0o644)
	const integrity = "sha512-bG9jYWxsb2NhbGxvY2FsbG9jYWxsb2NhbGxvY2FsbG9jYWw="
	for _, tc := range []struct{ name, version, want string }{
		{"tsx", "4.19.2", "tsx"},
		{"ts-node", "10.9.2", "ts-node"},
		{"nodemon", "3.1.9", "nodemon"},
		{"cross-env", "7.0.3", "cross-env"},
		{"@babel/node", "7.26.0", "babel-node"},
		{"node", "22.12.0", "node"},
	} {
		writeLock(t, filepath.Join(work, "node_modules"), tc.name, tc.version, integrity)
		l, err := ResolveLaunch(ServerConfig{Name: "s", Transport: TransportStdio, Command: "npx",
			Args: []string{"-y", tc.name + "@" + tc.version, "x.ts"}, Cwd: work}, nil)
		if err != nil || l.Unpinned == "" || l.Package != "" {
			t.Errorf("npx %s@%s: err %v, pinned %q, unpinned %q; want it refused", tc.name, tc.version, err, l.Package, l.Unpinned)
			continue
		}
		if !strings.Contains(l.Unpinned, tc.want) {
			t.Errorf("npx %s@%s: %q does not name %q", tc.name, tc.version, l.Unpinned, tc.want)
		}
	}
	// A server package is pinned as before.
	writeLock(t, filepath.Join(work, "node_modules"), "@scope/srv", "1.2.3", integrity)
	l, err := ResolveLaunch(ServerConfig{Name: "s", Transport: TransportStdio, Command: "npx", Args: []string{"-y", "@scope/srv@1.2.3"}, Cwd: work}, nil)
	if err != nil || l.Unpinned != "" || l.Package != "@scope/srv@1.2.3" {
		t.Errorf("server package: %v %q %q", err, l.Package, l.Unpinned)
	}
}

// An interpreter given a launcher's or a runner's own script (npm's
// npx-cli.js, a package's bin linked in node_modules/.bin, poetry's
// python script) pins that script, not what it runs: refused as the
// launcher or runner would be.
func TestInterpreterRunningARunnerRefused(t *testing.T) {
	fakeProgs(t, "node", "python3", "bash")
	work := t.TempDir()
	mk := func(rel string) {
		p := filepath.Join(work, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("// "+rel+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("node_modules/npm/bin/npx-cli.js")
	mk("node_modules/tsx/dist/cli.mjs")
	mk("node_modules/@babel/node/bin/babel-node.js")
	mk("node_modules/srv/dist/index.js")
	mk("venv/bin/poetry")
	mk("gradlew")
	mk("mvnw")
	mk("venv/bin/ipython3")
	mk("tools/R")
	mk("x.ts")
	os.MkdirAll(filepath.Join(work, "node_modules", ".bin"), 0o755)
	if err := os.Symlink("../tsx/dist/cli.mjs", filepath.Join(work, "node_modules", ".bin", "tsx")); err != nil {
		t.Fatal(err)
	}
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"node", "node_modules/npm/bin/npx-cli.js", "-y", "pkg"}, unpinned: "npx"},
		{cmd: []string{"node", "node_modules/.bin/tsx", "x.ts"}, unpinned: "tsx"},
		{cmd: []string{"node", "node_modules/tsx/dist/cli.mjs", "x.ts"}, unpinned: "tsx"},
		{cmd: []string{"node", "node_modules/@babel/node/bin/babel-node.js", "x.ts"}, unpinned: "babel-node"},
		{cmd: []string{"python3", "venv/bin/poetry", "run", "python", "x.py"}, unpinned: "poetry"},
		// A build tool's wrapper script run by a shell builds what it
		// runs from files clawd does not pin, as the wrapper itself would.
		{cmd: []string{"bash", "gradlew", "run"}, unpinned: "gradlew"},
		{cmd: []string{"bash", "./mvnw", "exec:java"}, unpinned: "mvnw"},
		// An interpreter's own script runs the file its arguments name.
		{cmd: []string{"python3", "venv/bin/ipython3", "x.py"}, unpinned: "ipython3"},
		{cmd: []string{"bash", "tools/R", "-e", "1"}, unpinned: "R"},
		// A server package's own file is pinned as before.
		{cmd: []string{"node", "node_modules/srv/dist/index.js"}, script: "node_modules/srv/dist/index.js"},
	})
}

// A runner's own script run as the command itself (npm makes a package's
// bin executable, with a #!/usr/bin/env node line), by its path in
// node_modules or through a link named otherwise, is the runner under
// another name: refused by its package as the interpreter form is, where
// it would pass as a plain executable pinned by the runner's hash alone.
func TestRunnerScriptAsCommandRefused(t *testing.T) {
	fakeProgs(t, "node")
	work := t.TempDir()
	mk := func(rel string) {
		p := filepath.Join(work, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/usr/bin/env node\n// "+rel+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("node_modules/tsx/dist/cli.mjs")
	mk("node_modules/@babel/node/bin/babel-node.js")
	mk("node_modules/cross-env/src/bin/cross-env.js")
	mk("node_modules/srv/dist/index.js")
	mk("x.ts")
	if err := os.Symlink("node_modules/tsx/dist/cli.mjs", filepath.Join(work, "start")); err != nil {
		t.Fatal(err)
	}
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"./node_modules/tsx/dist/cli.mjs", "x.ts"}, unpinned: "tsx"},
		{cmd: []string{"./start", "x.ts"}, unpinned: "tsx"},
		{cmd: []string{"./node_modules/@babel/node/bin/babel-node.js", "x.ts"}, unpinned: "babel-node"},
		{cmd: []string{"./node_modules/cross-env/src/bin/cross-env.js", "node", "x.js"}, unpinned: "cross-env"},
		// A server package's own bin is a plain executable, as before.
		{cmd: []string{"./node_modules/srv/dist/index.js"}},
	})
}

// More programs of the refused kinds, which passed as plain executables
// pinned by their own hash while they run a script, recipe or command
// their arguments name: shells and interpreters without an option table,
// task runners, and wrappers (secret managers among them).
func TestMoreRunnersRefused(t *testing.T) {
	fakeProgs(t, "nu", "xonsh", "oksh", "sed", "php-cgi", "bb", "zx", "rake", "gulp", "cmake", "ninja", "turbo", "op", "doppler", "ssh-agent", "xvfb-run", "bundle")
	work := t.TempDir()
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"nu", "srv.nu"}, unpinned: "nu"},
		{cmd: []string{"xonsh", "srv.xsh"}, unpinned: "xonsh"},
		{cmd: []string{"oksh", "srv.sh"}, unpinned: "oksh"},
		{cmd: []string{"sed", "-f", "srv.sed"}, unpinned: "sed"},
		{cmd: []string{"php-cgi", "srv.php"}, unpinned: "php-cgi"},
		{cmd: []string{"bb", "srv.clj"}, unpinned: "bb"},
		{cmd: []string{"zx", "srv.mjs"}, unpinned: "zx"},
		{cmd: []string{"rake", "serve"}, unpinned: "builds"},
		{cmd: []string{"gulp", "serve"}, unpinned: "builds"},
		{cmd: []string{"cmake", "-P", "srv.cmake"}, unpinned: "builds"},
		{cmd: []string{"ninja", "serve"}, unpinned: "builds"},
		{cmd: []string{"turbo", "run", "serve"}, unpinned: "builds"},
		{cmd: []string{"op", "run", "--", "node", "x.js"}, unpinned: "starts the program"},
		{cmd: []string{"doppler", "run", "--", "node", "x.js"}, unpinned: "starts the program"},
		{cmd: []string{"ssh-agent", "node", "x.js"}, unpinned: "starts the program"},
		{cmd: []string{"xvfb-run", "node", "x.js"}, unpinned: "starts the program"},
		{cmd: []string{"bundle", "exec", "ruby", "x.rb"}, unpinned: "starts the program"},
	})
}

// A link named like an interpreter that leads to a wrapper or a
// multi-call binary runs that program (argv[0] is the resolved path):
// `./node sh server.sh`, node a link to env or busybox, would pin a file
// named sh in the server's directory while env or busybox runs the sh of
// PATH or its applet, and server.sh unpinned. The resolved program's
// refusal wins over the name's rules.
func TestLinkNamedLikeInterpreterToWrapperRefused(t *testing.T) {
	bin := fakeProgs(t, "env", "busybox", "gradle")
	work := t.TempDir()
	for _, f := range []string{"sh", "server.sh"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("# "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"node": "env", "python3": "busybox", "bash": "gradle"} {
		if err := os.Symlink(filepath.Join(bin, target), filepath.Join(work, link)); err != nil {
			t.Fatal(err)
		}
	}
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"./node", "sh", "server.sh"}, unpinned: "env starts the program"},
		{cmd: []string{"./python3", "sh", "server.sh"}, unpinned: "busybox starts the program"},
		{cmd: []string{"./bash", "server.sh"}, unpinned: "gradle builds"},
	})
}

// A plain executable whose #! line runs it through a fetcher, a build
// tool or a wrapper runs more than the script clawd pins (the package npx
// or uv fetches, what make builds, what nice starts), as that program
// named as the command would: refused. An interpreter that runs the
// script itself stays allowed, as the refusals of those interpreters
// advise.
func TestShebangThroughRefusedProgram(t *testing.T) {
	fakeProgs(t, "npx", "uv", "make", "nice", "awk", "tsx", "node")
	work := t.TempDir()
	for name, line := range map[string]string{
		"npxsrv":  "#!/usr/bin/env -S npx -y pkg@latest",
		"uvsrv":   "#!/usr/bin/env -S uv run --script",
		"makesrv": "#!/usr/bin/make -f",
		"nicesrv": "#!/usr/bin/nice -n 5 /bin/sh ./other.sh",
		"awksrv":  "#!/usr/bin/awk -f",
		"tsxsrv":  "#!/usr/bin/env tsx",
		"nodesrv": "#!/usr/bin/env node",
	} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(line+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"./npxsrv"}, unpinned: "npx"},
		{cmd: []string{"./uvsrv"}, unpinned: "fetches and runs"},
		{cmd: []string{"./makesrv"}, unpinned: "builds"},
		{cmd: []string{"./nicesrv"}, unpinned: "starts the program"},
		{cmd: []string{"./awksrv"}},
		{cmd: []string{"./tsxsrv"}},
		{cmd: []string{"./nodesrv"}},
	})
}
