package upstream

import (
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// Which rule applies to a stdio server's command, told from the program's
// name alone (launcherKind), and why a command whose kind runs what clawd
// cannot pin is refused whatever its arguments (kindRefusal,
// runnerScriptRefusal). The name is all these read: a program renamed to
// something the tables do not list is a plain executable, pinned by its
// own hash, and a plain-looking name is read by its rule, except that a
// link to an executable refused whatever its arguments (a link named node
// to env, busybox or gradle) is refused as that executable. The rules
// that read the arguments and the file are in launch.go,
// launch_script.go and launch_runtimes.go.

// progName is a command's base name, lowercase on Windows and without an
// executable suffix, a stream or trailing dots and blanks there.
func progName(p string) string { return progNameOn(runtime.GOOS, filepath.Base(p)) }

// progNameOn is progName of the base name b on the system goos.
func progNameOn(goos, b string) string {
	if goos == "darwin" {
		// The default file system ignores case: Node runs node.
		b = strings.ToLower(b)
	}
	if goos == "windows" {
		// Windows reads name:stream as a stream of the file name (the
		// unnamed one, ::$DATA, is the program), and drops a name's
		// trailing dots and blanks: node.exe::$DATA and "node.exe ." run
		// node.exe.
		b, _, _ = strings.Cut(b, ":")
		b = strings.ToLower(strings.TrimRight(b, ". "))
		for _, ext := range []string{".exe", ".cmd", ".bat"} {
			b = strings.TrimSuffix(b, ext)
		}
	}
	return b
}

var (
	// python3.13t (free-threaded), python3.7m and python3-dbg too, and
	// Windows' pythonw (pythonw3.13t).
	pythonName = regexp.MustCompile(`^(python|pypy)w?[0-9.]*[tmd]?(-dbg)?$`)
	// deno (and bun) take any argument starting with a scheme (npm:,
	// jsr:, https:, data:) for a module to fetch, not a file, even when a
	// file of that name exists.
	urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]+:`)
	// lua5.4, luajit2.1 and Debian's luajit-2.1.0-beta3 (a digit must
	// follow a dash: lua-language-server is another program).
	luaName = regexp.MustCompile(`^(lua|luajit)(-?[0-9][0-9a-z.-]*)?$`)
	// A runtime or shell named with its version, as Debian installs
	// ruby3.1, php8.2 and perl5.36.0 (the real binaries, the plain names
	// links to them), zsh installs zsh-5.9 beside zsh, and version managers
	// link node22 or java17: the plain name's rules (a digit must follow a
	// dash: node-gyp is another program). Debian's static builds
	// (bash-static, zsh-static, mksh-static, busybox's) are the same
	// programs.
	versionedName = regexp.MustCompile(`^(nodejs|node|ruby|perl|php|bash|zsh|ksh|mksh|dash|fish|java|javaw|busybox)(?:-?[0-9][0-9.]*|-static)$`)
	// Interpreters named with their version (tclsh8.6, guile3.0, wish9).
	interpName = regexp.MustCompile(`^(tclsh|wish|guile)[0-9.]*$`)
)

// kindNames lists, for each rule kind, the exact program names it applies
// to. A name may stand under one kind only (kindByName panics at start
// otherwise); names with a version in them are matched by launcherKind's
// patterns instead.
var kindNames = []struct {
	kind  string
	names []string
}{
	{"node", []string{"node", "nodejs"}},
	{"shell", []string{"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh"}},
	{"ruby", []string{"ruby"}},
	{"perl", []string{"perl"}},
	{"php", []string{"php"}},
	{"deno", []string{"deno"}},
	{"bun", []string{"bun"}},
	{"npx", []string{"npx", "npx-cli.js"}},
	{"fetcher", []string{"uvx", "uv", "pnpm", "pnpx", "bunx", "yarn", "pipx", "npm", "npm-cli.js", "dnx", "corepack",
		// Java's script and package launchers resolve and fetch Maven
		// artifacts at every start.
		"jbang", "coursier"}},
	// Build tools and toolchains whose commands build what they run
	// (`go run`, `cargo run`, a Makefile's recipe), or fetch it (`go run
	// pkg@version`, `nix run`): only the tool itself would be pinned.
	{"builder", []string{"go", "cargo", "rustup", "make", "gmake", "just", "gradle", "gradlew", "mvn", "mvnw", "sbt",
		"swift", "mix", "rebar3", "dune", "cabal", "stack", "zig", "nix", "nix-shell",
		// Toolchains that compile a script (and fetch what it declares)
		// before they run it.
		"kotlin", "kotlinc", "scala", "scala-cli", "amm", "dart", "crystal", "nim", "gleam",
		// Task runners whose recipes are code in the workspace
		// (Rakefile, gulpfile.js, a CMake script, build.ninja, a
		// package.json's scripts run by a monorepo tool).
		"rake", "gulp", "grunt", "cmake", "ninja", "meson", "bazel", "bazelisk", "scons", "invoke", "nox", "tox", "task",
		"lein", "ant", "xmake", "turbo", "nx", "lerna", "composer"}},
	{"java", []string{"java", "javaw"}},
	{"jshell", []string{"jshell"}},
	{"dotnet", []string{"dotnet"}},
	{"rscript", []string{"Rscript", "rscript"}},
	{"wrapper", []string{"env", "nice", "nohup", "timeout", "stdbuf", "setsid", "time", "ionice", "chrt",
		"taskset", "xargs", "sudo", "doas", "busybox",
		// More programs that run the command in their arguments: other
		// users' and namespaces' launchers, tracers and debuggers, and
		// PowerShell and WSL (on Windows, and pwsh elsewhere too).
		"su", "runuser", "systemd-run", "unshare", "nsenter", "chroot", "firejail", "bwrap",
		"flatpak-spawn", "flock", "watch", "strace", "ltrace", "valgrind", "gdb",
		"caffeinate", "arch", "pwsh", "powershell", "wsl",
		// Terminal multiplexers and relays that run a command they are
		// given, and runners that run one per input or change.
		"script", "socat", "tmux", "screen", "pkexec", "sshpass", "parallel", "entr", "expect",
		// Environment managers and version managers that run a command
		// in their environment, and npm's helpers that run one with
		// variables set (or several at once).
		"poetry", "pipenv", "pdm", "hatch", "rye", "pixi", "conda", "mamba", "micromamba", "direnv", "mise", "rtx",
		"asdf", "volta", "fnm", "cross-env", "dotenv", "dotenvx", "env-cmd", "concurrently", "npm-run-all", "run-s", "run-p",
		// Secret managers that run a command with the secrets set
		// (`op run -- CMD`), and more runners of a command: under
		// another group, limits, a fake root or time, a proxy, a
		// display or session, an init, or an agent (ssh-agent CMD).
		"op", "doppler", "infisical", "aws-vault", "sops", "chamber", "envchain", "bundle",
		"sg", "setpriv", "prlimit", "fakeroot", "proot", "eatmydata", "faketime", "numactl", "cgexec", "torsocks",
		"proxychains", "proxychains4", "xvfb-run", "dbus-run-session", "dbus-launch", "systemd-inhibit", "ssh-agent",
		"tini", "dumb-init"}},
	// Runners of TypeScript (or newer JavaScript) files, which compile the
	// script they are given and run it through node.
	{"tsrunner", []string{"tsx", "ts-node", "ts-node-esm", "ts-node-script", "ts-node-cwd", "ts-node-transpile-only", "babel-node",
		"vite-node", "esno", "esrun", "jiti", "sucrase-node"}},
	// Runners that start the script again when a file changes, and
	// process managers that restart it.
	{"watcher", []string{"nodemon", "node-dev", "ts-node-dev", "tsnd", "pm2", "pm2-runtime", "forever"}},
	// Interpreters clawd has no option table for: the program or script
	// file they run (awk -f FILE, tclsh FILE) is named in arguments clawd
	// does not read.
	{"interp", []string{"awk", "gawk", "mawk", "nawk", "original-awk", "goawk", "R", "r", "jjs", "racket", "sbcl", "clisp", "octave",
		"octave-cli", "groovy", "raku", "rakudo", "perl6", "ipython", "ipython3", "jruby", "jython", "osascript",
		"cscript", "wscript", "escript", "elixir", "julia", "erl", "runghc", "runhaskell", "dotnet-script", "truffleruby",
		// Shells without an option table here, and more interpreters of
		// a script file: a sed script (GNU sed's e runs commands), m4's
		// syscmd, php-cgi, Clojure's, OCaml's, Prolog's, JavaScript
		// engines other than node, and zx.
		"nu", "elvish", "xonsh", "oksh", "loksh", "pdksh", "posh", "rc", "osh", "ysh",
		"sed", "gsed", "m4", "php-cgi", "irb", "bb", "clojure", "clj", "ocaml", "swipl", "janet", "fennel", "hy",
		"qjs", "gjs", "zx"}},
	// Windows' python launcher runs the interpreter the script's #! line
	// or py.ini names (py.ini may name any command).
	{"pylauncher", []string{"py", "pyw"}},
}

// windowsKindNames are kindNames that hold on Windows only: elsewhere cmd
// is no command interpreter (and not a wrapper clawd knows of).
var windowsKindNames = map[string]string{
	"cmd": "wrapper", // cmd /c PROGRAM
}

// kindByName is kindNames (and on Windows windowsKindNames) by name.
var kindByName = func() map[string]string {
	m := map[string]string{}
	add := func(name, kind string) {
		if k, ok := m[name]; ok {
			panic(fmt.Sprintf("launcher kind table: %q is both %s and %s", name, k, kind))
		}
		m[name] = kind
	}
	for _, k := range kindNames {
		for _, n := range k.names {
			add(n, k.kind)
		}
	}
	if runtime.GOOS == "windows" {
		for n, k := range windowsKindNames {
			add(n, k)
		}
	}
	return m
}()

// kindPatterns are the rule kinds of names with a version in them, tried
// in order after kindByName. A versioned runtime (node22, perl5.36.0)
// takes the kind of its plain name (versionedName's first group).
var kindPatterns = []struct {
	re   *regexp.Regexp
	kind func(m []string) string
}{
	{pythonName, func([]string) string { return "python" }},
	{luaName, func([]string) string { return "lua" }},
	{interpName, func([]string) string { return "interp" }},
	{versionedName, func(m []string) string { return kindByName[m[1]] }},
}

// plainName is the name a runtime or shell named with its version has
// without it (zsh-5.9: zsh, fish3.7: fish), whose option table and env
// rules it takes; any other name as it is.
func plainName(name string) string {
	if _, ok := kindByName[name]; !ok {
		if m := versionedName.FindStringSubmatch(name); m != nil {
			return m[1]
		}
	}
	return name
}

// launcherKind maps a program name to the rule that applies to it, "" for
// a plain executable. The name is matched exactly (progName has already
// folded case where the file system does): a listed name first, then the
// versioned patterns.
func launcherKind(name string) string {
	if kind, ok := kindByName[name]; ok {
		return kind
	}
	for _, p := range kindPatterns {
		if m := p.re.FindStringSubmatch(name); m != nil {
			return p.kind(m)
		}
	}
	return ""
}

// kindRefusal is why a command of kind (fetcher, wrapper, builder, or a
// script runner clawd reads no options of), named name, is refused
// whatever its arguments, with the command to give instead; "" for the
// other kinds.
func kindRefusal(kind, name string) string {
	switch kind {
	case "fetcher":
		return fmt.Sprintf("%s fetches and runs a package that clawd cannot pin; install the package and give its executable (or `node`/`python` and its script) as the command", name)
	case "wrapper":
		return fmt.Sprintf("%s starts the program named in its arguments, which clawd would not pin (only %s itself); name that program as the command (variables go in the server's env)", name, name)
	case "builder":
		return fmt.Sprintf("%s builds (and may fetch) the code it runs, from sources and recipes clawd cannot pin, at every start; build the server once (for Go, `go build -o BIN`) and give the built executable as the command", name)
	case "tsrunner":
		return fmt.Sprintf("%s compiles and runs the script named in its arguments, whose options clawd does not read, so it would pin only %s and not the script (and %s may run a cached compiled copy); run it with node, which clawd pins the script of: `node --experimental-strip-types FILE.ts` (node 22.6 and later; the default from 23.6), or compile it (tsc) and run `node FILE.js`", name, name, name)
	case "watcher":
		return fmt.Sprintf("%s runs the script named in its arguments, and again whenever a file changes, none of which clawd checks (it would pin only %s); give `node FILE` (or the script's own interpreter and FILE) as the command", name, name)
	case "pylauncher":
		return fmt.Sprintf("%s runs the python that the script's #! line or its py.ini names (py.ini may name any command), which clawd does not pin; give that python's own path (`py -0p` lists them) and the script as the command", name)
	case "interp":
		fix := fmt.Sprintf("give the script a #! line (`#!/usr/bin/env %s`), make it executable and give the script itself as the command: its SHA-256 is then the pin", name)
		switch {
		case name == "R" || name == "r":
			fix = "run it with `Rscript FILE`, which clawd pins the script of"
		case strings.HasSuffix(name, "awk"):
			fix = fmt.Sprintf("put the program in a file that starts with `#!/usr/bin/%s -f` (its path on this system), make it executable and give that file as the command: its SHA-256 is then the pin", name)
		}
		return fmt.Sprintf("%s runs a program or script file named in its arguments (or read from its input, clawd's requests), whose options clawd does not read, so it would pin only %s and not that file; %s", name, name, fix)
	}
	return ""
}

// runnerScriptRefusal says why an interpreter running the script
// given (real: its resolved path) runs what clawd cannot pin, or "": the
// script is a launcher's, a wrapper's, a runner's, a build tool's or an
// interpreter's own (npm's npx-cli.js, tsx's bin, poetry's python script,
// gradlew, R's shell script), named so (given or resolved) or in a
// node_modules package of that name, which runs what its own arguments or
// build files name while clawd would pin only it.
func runnerScriptRefusal(given, real string) string {
	names := []string{progName(given), progName(real)}
	if i := strings.LastIndex(filepath.ToSlash(real), "/node_modules/"); i >= 0 {
		rest := strings.Split(filepath.ToSlash(real)[i+len("/node_modules/"):], "/")
		pkg := rest[0]
		if strings.HasPrefix(pkg, "@") && len(rest) > 1 {
			pkg += "/" + rest[1]
		}
		if prog := npxPrograms[pkg]; prog != "" {
			pkg = prog
		}
		names = append(names, pkg[strings.LastIndex(pkg, "/")+1:])
	}
	for _, n := range names {
		switch kind := launcherKind(n); kind {
		case "npx":
			return fmt.Sprintf("%s is npx's own script, which runs a package clawd would not pin (only the script); give `npx -y NAME@VERSION` as the command, which clawd pins", given)
		case "fetcher", "wrapper", "tsrunner", "watcher", "pylauncher", "builder", "interp":
			return fmt.Sprintf("%s is %s's own script, and clawd would pin only it, not what it runs: %s", given, n, kindRefusal(kind, n))
		}
	}
	return ""
}
