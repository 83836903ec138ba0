package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// Launch is what a stdio server's command runs, as far as clawd can tell
// before starting it: the executable, and for an interpreter or a package
// launcher what that executable will itself run. Approval pins every part
// that is set (docs/upstreams.md, "Approval: what is pinned").
//
// Which commands are looked into (the base name of the configured command,
// or of the resolved executable, without .exe/.cmd):
//
//   - node, nodejs, python, python3, python3.N, pypy3, pythonw, bash, sh,
//     dash, zsh, ksh, mksh, fish, csh, tcsh, ruby, perl, php, lua, luajit: the first
//     argument that is not an option is the script file; it must be an
//     existing regular file, whose SHA-256 is pinned (Script,
//     ScriptSHA256); php -f FILE names it too. Each program's options are
//     read with its own table (launch_opts.go; a shell's by its name, and
//     sh with the table of the shell it resolves to as well), which lists
//     the options that take no value and those that take one: an option
//     in neither is refused (clawd cannot tell whether the next argument
//     is its value or the script), and so is a separate value that starts
//     with "-". An option that makes the interpreter run code from
//     elsewhere, or look the file up elsewhere than where clawd pinned it,
//     is refused (Unpinned): node -e/-p/-r/--import/--loader, --watch,
//     --openssl-config..., with underscores read as dashes, and
//     --inspect/--inspect-brk/--inspect-wait (a debugger port anyone
//     local can run code through); python -c/-m, -X presite (a debug
//     build imports that module first) and -X pycache_prefix; perl's -D
//     passes (debug output: it takes only the letters or digits after
//     it); a shell's -c/-s/-i and a login shell; perl
//     -e/-E/-M/-m/-d/-F/-S; ruby -e/-r/-C/-X/-xDIR/-S,
//     --crash-report; php -r, -B/-R/-F/-E, -a, -c, -z, -S/-t, "--" before
//     the script (php reads stdin), and -d with a key that loads code
//     (auto_prepend_file, extension, xdebug.*...) or a line break; lua
//     -e/-l; "-" for stdin. Values attached to a one-letter option (perl
//     -CSDA, -i.bak) are not read as more options.
//   - deno run [options] FILE and bun [run] FILE: as above; a URL is
//     refused, and so are --preload, --watch, --inspect*, deno's
//     --env-file, bun's --hot, --config, --cwd and --filter. bun's FILE
//     must start with "." or be absolute, or (bare bun, without run) end
//     in .js, .ts, .mjs and the like: else bun runs a package.json script
//     of that name, when there is one, in place of the file.
//   - Rscript [--options] FILE: as above, with Rscript's reading (the first
//     argument not starting with "--" is the file) and R's (--encoding and
//     the like only as --name=VALUE; no blanks or wildcards); -e,
//     --restore, --args, --file, --debugger, --arch and --interactive are
//     refused.
//   - java [options] -jar FILE, java [options] FILE.java (or any FILE after
//     --source N): FILE is pinned. A main class, -m/--module, an @argfile,
//     a long option java does not list, and options that load code from
//     elsewhere (-javaagent:, -agentlib:, -agentpath:, -Xbootclasspath,
//     --module-path, --patch-module, the JMX agent's
//     -Dcom.sun.management.*...) are refused, and so is such an option in
//     JDK_JAVA_OPTIONS, JAVA_TOOL_OPTIONS or _JAVA_OPTIONS in the server's
//     env. jshell is refused.
//   - dotnet [exec] [host options] FILE.dll (or .exe): FILE is pinned. An
//     SDK command (run, tool, watch, dnx, a .cs file...), dnx, and
//     --additional-deps/--additionalprobingpath are refused.
//   - A variable in the server's configured env that makes the program
//     load or run code besides the pinned file is refused
//     (launch_env_rules.go). Every runtime's own variables are refused
//     whatever the command, a plain executable too, since it may start
//     that runtime (everyProgram): an option variable's options, read with
//     the runtime's table (NODE_OPTIONS, BUN_OPTIONS, PERL5OPT's
//     -M/-m/-d, RUBYOPT's -r, the JVM's option variables, npm's
//     npm_config_node_options; an unknown option is refused too, and
//     NODE_OPTIONS=--max-old-space-size=4096 or JAVA_TOOL_OPTIONS=-Xmx1g
//     pass), startup files and their directories (BASH_ENV, BASHOPTS
//     with extdebug, ZDOTDIR, R_PROFILE*, R_ENVIRON*, R_TESTS, R_ARCH,
//     RHOME, PHPRC, PHP_INI_SCAN_DIR, XDEBUG_*, BUNDLER_SETUP,
//     RUBYGEMS_GEMDEPS), code
//     in the value (LUA_INIT*, PS4, PERL5DB), caches of compiled code
//     (NODE_COMPILE_CACHE, PYTHONPYCACHEPREFIX, DENO_DIR, bun's),
//     PYTHONINSPECT, PYTHON_PRESITE, python's home and site directories
//     (PYTHONHOME, PYTHONPLATLIBDIR, PYTHONEXECUTABLE, PYTHONUSERBASE without
//     PYTHONNOUSERSITE...), DENO_TSC_BIN, bun's BUN_INSPECT*, npm's
//     settings that run code (npm_config_script_shell...); and
//     LD_PRELOAD, LD_AUDIT, DYLD_INSERT_LIBRARIES, GCONV_PATH, OpenSSL's
//     OPENSSL_CONF* and OPENSSL_MODULES/ENGINES, and .NET's startup hooks,
//     profilers, GC library, diagnostic ports and DOTNET_ROOT. Variables
//     with a broad meaning of their own are refused only for the program
//     clawd recognises (by name or #! line) that reads them as code
//     (envRules): ENV for sh/ash/ksh, HOME for zsh, csh and tcsh, fish's
//     XDG directories and HOME, python's HOME and APPDATA (its user site
//     directory, without PYTHONNOUSERSITE), npx's HOME, USERPROFILE,
//     PREFIX and DESTDIR (which lead npm to an .npmrc), deno's and bun's
//     XDG_CACHE_HOME and HOME (where their caches of compiled code are
//     when DENO_DIR and bun's cache path are not set; bun's pass with its
//     cache off), Rscript's HOME and R_USER (~/.Rprofile, ~/.Renviron).
//     For a plain executable these broad names pass: which files under
//     HOME a program reads as code is its own (git's config, ssh's, a
//     shell's), like the many variables that make some program run a
//     command (GIT_SSH_COMMAND, PAGER), and servers set HOME for their
//     own data. Search paths (NODE_PATH, PYTHONPATH, PERL5LIB, RUBYLIB,
//     LUA_PATH, perl/ruby -I, php's include_path, LD_LIBRARY_PATH,
//     DYLD_LIBRARY_PATH...) pass.
//   - npx [-y|--yes] NAME@X.Y.Z [args]: the package's version and
//     integrity are read from the lockfile npx would use: the project's
//     node_modules/.package-lock.json if the package is installed there,
//     else the npx cache (<npm cache>/_npx/<hash>/node_modules/.package-lock.json).
//     A floating spec (no version, a tag, a range, a git or file spec) is
//     refused with NAME@VERSION as the fix, and so is an exact version that
//     is in neither place (npx would download it unseen). A package whose
//     program clawd recognises as running what its arguments name (tsx,
//     nodemon, cross-env, node, the ones below) is refused: the package's
//     integrity would not cover the script it runs.
//   - uvx, uv, pnpm dlx, pnpx, bunx, bun x, yarn dlx, pipx run, npm exec/x,
//     dnx, corepack, jbang, coursier: they fetch and run a package clawd
//     cannot pin; refused, with
//     "install it and name its executable" as the fix.
//   - env, nice, nohup, timeout, stdbuf, setsid, time, ionice, chrt,
//     taskset, xargs, sudo, doas, busybox, cmd (Windows), the environment
//     managers (poetry, pipenv, pdm, hatch, conda, mise, volta...) and
//     npm's env helpers (cross-env, dotenv, env-cmd, concurrently...):
//     they start the program named in their arguments, which would go
//     unpinned (`env npx -y pkg` would run a floating package under env's
//     hash); refused, with "name that program as the command" as the fix.
//   - Script runners clawd reads no options of, which would pin only
//     themselves and not the script they run: tsx, ts-node, babel-node,
//     vite-node and the other TypeScript runners (fix: node
//     --experimental-strip-types FILE.ts, or compile and run node
//     FILE.js); nodemon, node-dev, pm2, forever, which also run it again
//     when it changes; awk and its kin (-f FILE, gawk's -i and @include),
//     R, tclsh, wish, guile, julia, jjs, racket, sbcl, octave, groovy,
//     raku, ipython, jruby, jython, osascript, elixir, escript, erl,
//     runghc, dotnet-script (fix: a #!
//     line in the script, given itself as the command, or Rscript FILE);
//     Windows' py and pyw, which run the python a #! line or py.ini names
//     (fix: that python's path and the script). An interpreter given such
//     a program's own script (node npx-cli.js, node node_modules/.bin/tsx,
//     python venv/bin/poetry), named so or in a node_modules package of
//     that name, is refused the same way.
//     Refused (launcherKind's list; a name it does not list is a plain
//     executable).
//   - go, cargo, make and the other build tools, and the toolchains that
//     compile a script before running it (kotlin, scala-cli, dart...;
//     launcherKind): they build (or fetch) what they run at every start;
//     refused, with "build it once and give the built executable" as the
//     fix.
//
// Anything else is an executable whose own SHA-256 is the pin. What a
// program loads or starts by itself (node's require of sibling files,
// python imports, a shell script's `source`, a binary that execs another,
// the jars a jar's manifest or -cp names, the assemblies and the
// .runtimeconfig.json and .deps.json beside a dll, R's .Rprofile, the
// modules a search path variable leads to, the startup files a shell reads
// from the system or the user's own home) is not pinned, nor are the
// variables of clawd's own environment that the server inherits: whoever
// sets those can load code into clawd itself.
type Launch struct {
	// Command is the configured command and arguments, for messages.
	Command []string
	// Exec is the resolved executable (absolute, symlinks resolved).
	Exec string
	// ExecSHA256 is filled in at spawn: the hash of the opened executable.
	ExecSHA256 string
	// Script is the absolute path (symlinks resolved) of the script the
	// interpreter runs; ScriptSHA256 its hash when it was resolved.
	Script       string
	ScriptSHA256 string
	// Launcher is "npx" when Package was resolved through it.
	Launcher string
	// Package is NAME@VERSION and Integrity its lockfile integrity
	// (sha512-...), read from Lockfile.
	Package   string
	Integrity string
	Lockfile  string
	// Unpinned, when set, says why what the command runs cannot be pinned
	// and what to do instead; such a command is never started.
	Unpinned string
}

// Pins lists what approval pins, for messages and `clawd mcp add` (paths
// shell-quoted):
// "executable PATH sha256 H", "script PATH sha256 H", "package N@V sha512-...".
func (l Launch) Pins() []string {
	q := func(p string) string { return QuoteCommand([]string{p}) }
	out := []string{fmt.Sprintf("executable %s sha256 %s", q(l.Exec), l.ExecSHA256)}
	if l.Script != "" {
		out = append(out, fmt.Sprintf("script %s sha256 %s", q(l.Script), l.ScriptSHA256))
	}
	if l.Package != "" {
		out = append(out, fmt.Sprintf("package %s integrity %s (from %s)", l.Package, l.Integrity, q(l.Lockfile)))
	}
	return out
}

// AllowLine is the `clawd mcp allow` command that approves exactly this
// launch (every hash named), for a server called server.
func (l Launch) AllowLine(server string) string {
	s := "clawd mcp allow --server " + server + " --sha256 " + l.ExecSHA256
	if l.Script != "" {
		s += " --script-sha256 " + l.ScriptSHA256
	}
	if l.Package != "" {
		s += " --package " + l.Package + " --integrity " + l.Integrity
	}
	return s
}

// ResolveLaunch resolves cfg's command (see Launch for the rules). env is
// the server's resolved environment (npm_config_cache may be set there).
// It does not hash the executable (the spawn hashes the descriptor it
// runs); it does hash a script. An error means the command cannot be found
// or read; a command that runs something clawd cannot pin comes back with
// Unpinned set.
func ResolveLaunch(cfg ServerConfig, env map[string]string) (Launch, error) {
	return resolveLaunch(cfg, env, plainHasher{})
}

// resolveLaunch is ResolveLaunch with the script hashed by h: a spawn
// passes the manager's hasher, which in the daemon is the cache the
// per-call check of the same script uses, so an unchanged script is read
// once, not at every spawn and again at the first call.
func resolveLaunch(cfg ServerConfig, env map[string]string, h FileHasher) (Launch, error) {
	l, err := launchPaths(cfg, env)
	if err != nil || l.Script == "" {
		return l, err
	}
	sum, err := h.Sum(l.Script)
	if err != nil {
		return l, fmt.Errorf("cannot read the script %s to check it: %v", l.Script, err)
	}
	l.ScriptSHA256 = sum
	return l, nil
}

// launchPaths resolves what cfg's command runs without hashing anything:
// Exec, Script, Package and Unpinned as ResolveLaunch sets them, and
// ScriptSHA256 empty. It reads no file's content except npm's lockfiles
// and the #! line of the executable (and of its interpreters), whose
// interpreters' env rules apply too.
func launchPaths(cfg ServerConfig, env map[string]string) (Launch, error) {
	l := Launch{Command: append([]string{cfg.Command}, cfg.Args...)}
	exe, err := resolveCommand(cfg.Command, cfg.Cwd)
	if err != nil {
		return l, err
	}
	l.Exec = exe
	name, exeName := progName(cfg.Command), progName(exe)
	kind := launcherKind(name)
	if kind == "" {
		kind = launcherKind(exeName)
	}
	// The env rules are those of what runs, not only of the command's
	// name: python3 may be a bash shim, an npm bin a node script.
	envWhy := func(names ...string) string {
		if len(env) == 0 {
			return ""
		}
		progs := append([]envProgram{{kind, name, names}}, shebangPrograms(exe)...)
		return envRefusal(env, name, progs)
	}
	if why := kindRefusal(kind, name); why != "" {
		l.Unpinned = why
		return l, nil
	}
	args := cfg.Args
	bunRun := false
	switch kind {
	case "":
		l.Unpinned = envWhy()
		return l, nil
	case "npx":
		l.Launcher = "npx"
		if l.Unpinned = envWhy(); l.Unpinned == "" {
			l.Unpinned = resolveNpx(&l, args, cfg.Cwd, env)
		}
		return l, nil
	case "deno":
		if len(args) == 0 || args[0] != "run" {
			l.Unpinned = "clawd pins `deno run [options] FILE`; other deno commands run code it cannot pin"
			return l, nil
		}
		args = args[1:]
	case "bun":
		if len(args) > 0 && (args[0] == "x" || args[0] == "add" || args[0] == "install") {
			l.Unpinned = "`bun " + args[0] + "` fetches a package that clawd cannot pin; install it and give its executable as the command"
			return l, nil
		}
		if len(args) > 0 && slices.Contains(bunCommands, args[0]) {
			// bun reads its own command first, even where a file of
			// that name exists: `bun test` runs the test runner.
			l.Unpinned = "`bun " + args[0] + "` is a bun command, not a script clawd can pin; give `bun FILE` (or `bun run FILE`) with the server's file"
			return l, nil
		}
		if len(args) > 0 && args[0] == "run" {
			args, bunRun = args[1:], true
		}
	case "jshell":
		l.Unpinned = "jshell evaluates the code it reads (its startup snippets, then stdin, where clawd writes requests), which clawd cannot pin; " + javaFix
		return l, nil
	}
	var script, why string
	switch kind {
	case "java":
		script, why = javaTarget(args)
	case "dotnet":
		script, why = dotnetTarget(args)
	case "rscript":
		script, why = rscriptTarget(args)
	default:
		script, why = findScript(kind, args, name, exeName)
	}
	if why == "" {
		why = envWhy(name, exeName)
	}
	if why != "" {
		l.Unpinned = why
		return l, nil
	}
	if strings.Contains(script, "://") || ((kind == "deno" || kind == "bun") && urlScheme.MatchString(script)) {
		l.Unpinned = fmt.Sprintf("%s runs %s from the network, which clawd cannot pin; download it, check it, and run the local file", name, script)
		return l, nil
	}
	if kind == "bun" && !bunReadsAsFile(script, bunRun) {
		l.Unpinned = fmt.Sprintf("bun reads `%s` as the name of a package.json script first and runs that script's command in place of the file when the nearest package.json has one of that name (the server may add it), which clawd cannot pin; give the file as `./%s` (or its absolute path)", script, script)
		return l, nil
	}
	given := script
	if !filepath.IsAbs(script) {
		base := cfg.Cwd
		if base == "" {
			if base, err = os.Getwd(); err != nil {
				return l, err
			}
		}
		script = filepath.Join(base, script)
	}
	if perProcessPath(script) {
		l.Unpinned = fmt.Sprintf("%s is (or leads through) a file of /proc or /dev, which names another file in the server's process than in clawd's (/dev/stdin is clawd's requests there), so clawd cannot pin what %s runs; name the script file itself", script, name)
		return l, nil
	}
	if real, err := filepath.EvalSymlinks(script); err == nil {
		script = real
	}
	fi, err := os.Stat(script)
	if err != nil {
		return l, fmt.Errorf("the script %s that %s would run: %v", script, name, err)
	}
	if !fi.Mode().IsRegular() {
		l.Unpinned = fmt.Sprintf("%s is not a regular file, so clawd cannot pin what %s runs from it; name the script file itself", script, name)
		return l, nil
	}
	if why := runnerScriptRefusal(given, script); why != "" {
		l.Unpinned = why
		return l, nil
	}
	l.Script = script
	return l, nil
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
// script is a launcher's, a wrapper's or a runner's own (npm's
// npx-cli.js, tsx's bin, poetry's python script), named so (given or
// resolved) or in a node_modules package of that name, which runs what
// its own arguments name while clawd would pin only it.
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
		case "fetcher", "wrapper", "tsrunner", "watcher", "pylauncher":
			return fmt.Sprintf("%s is %s's own script, and clawd would pin only it, not what it runs: %s", given, n, kindRefusal(kind, n))
		}
	}
	return ""
}

// bunFileExts are the extensions with which `bun FILE` (without run) runs
// the file before it looks for a package.json script of that name.
var bunFileExts = []string{".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"}

// bunReadsAsFile reports whether bun runs its argument a as a file before
// any package.json script of that name: when a starts with "." or is
// absolute, and without `run` (run false) when it ends in an extension
// bun runs. Otherwise bun runs the nearest package.json's script named a,
// if there is one, in place of the file.
func bunReadsAsFile(a string, run bool) bool {
	if strings.HasPrefix(a, ".") || filepath.IsAbs(a) {
		return true
	}
	return !run && slices.Contains(bunFileExts, filepath.Ext(a))
}

// perProcessPath reports whether path (absolute), or a link on the way to
// the file it names, is in /proc or /dev: /dev/stdin, /dev/fd/N and
// /proc/self/... resolve per process, so clawd would hash its own stdin or
// descriptor while the server reads its own (clawd's requests, on stdin).
// A chain of more than 40 links counts as such a path. Not on Windows.
func perProcessPath(path string) bool {
	if runtime.GOOS == "windows" {
		return false
	}
	p := filepath.Clean(path)
	for range 40 {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			p = filepath.Join(dir, filepath.Base(p))
		}
		for _, d := range []string{"/proc", "/dev"} {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		target, err := os.Readlink(p)
		if err != nil {
			return false // not a link: the file itself
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
	}
	return true
}

// progName is a command's base name, lowercase on Windows and without an
// executable suffix there.
func progName(p string) string {
	b := filepath.Base(p)
	if runtime.GOOS == "darwin" {
		// The default file system ignores case: Node runs node.
		b = strings.ToLower(b)
	}
	if runtime.GOOS == "windows" {
		b = strings.ToLower(b)
		for _, ext := range []string{".exe", ".cmd", ".bat"} {
			b = strings.TrimSuffix(b, ext)
		}
	}
	return b
}

// bunCommands are bun's built-in commands, which it runs in place of a
// file of the same name (bun 1.3's `bun --help`).
var bunCommands = []string{"test", "repl", "build", "create", "c", "init", "pm", "link", "unlink", "patch", "patch-commit",
	"upgrade", "exec", "outdated", "publish", "audit", "info", "update", "remove", "rm", "why", "completions",
	"discord", "help", "i", "a"}

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
	// A runtime named with its version, as Debian installs ruby3.1,
	// php8.2 and perl5.36.0 (the real binaries, the plain names links to
	// them) and version managers link node22: the runtime's rules.
	versionedName = regexp.MustCompile(`^(nodejs|node|ruby|perl|php)[0-9][0-9.]*$`)
	// Interpreters named with their version (tclsh8.6, guile3.0, wish9).
	interpName = regexp.MustCompile(`^(tclsh|wish|guile)[0-9.]*$`)
)

// launcherKind maps a program name to the rule that applies to it, "" for
// a plain executable.
func launcherKind(name string) string {
	switch name {
	case "node", "nodejs":
		return "node"
	case "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh":
		return "shell"
	case "ruby", "perl", "php":
		return name
	case "deno":
		return "deno"
	case "bun":
		return "bun"
	case "npx", "npx-cli.js":
		return "npx"
	case "uvx", "uv", "pnpm", "pnpx", "bunx", "yarn", "pipx", "npm", "npm-cli.js", "dnx", "corepack",
		// Java's script and package launchers resolve and fetch Maven
		// artifacts at every start.
		"jbang", "coursier":
		return "fetcher"
	// Build tools and toolchains whose commands build what they run
	// (`go run`, `cargo run`, a Makefile's recipe), or fetch it (`go run
	// pkg@version`, `nix run`): only the tool itself would be pinned.
	case "go", "cargo", "rustup", "make", "gmake", "just", "gradle", "gradlew", "mvn", "mvnw", "sbt",
		"swift", "mix", "rebar3", "dune", "cabal", "stack", "zig", "nix", "nix-shell",
		// Toolchains that compile a script (and fetch what it declares)
		// before they run it.
		"kotlin", "kotlinc", "scala", "scala-cli", "amm", "dart", "crystal", "nim", "gleam":
		return "builder"
	case "java", "javaw":
		return "java"
	case "jshell":
		return "jshell"
	case "dotnet":
		return "dotnet"
	case "Rscript", "rscript":
		return "rscript"
	case "env", "nice", "nohup", "timeout", "stdbuf", "setsid", "time", "ionice", "chrt",
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
		"asdf", "volta", "fnm", "cross-env", "dotenv", "dotenvx", "env-cmd", "concurrently", "npm-run-all", "run-s", "run-p":
		return "wrapper"
	// Runners of TypeScript (or newer JavaScript) files, which compile the
	// script they are given and run it through node.
	case "tsx", "ts-node", "ts-node-esm", "ts-node-script", "ts-node-cwd", "ts-node-transpile-only", "babel-node",
		"vite-node", "esno", "esrun", "jiti", "sucrase-node":
		return "tsrunner"
	// Runners that start the script again when a file changes, and
	// process managers that restart it.
	case "nodemon", "node-dev", "ts-node-dev", "tsnd", "pm2", "pm2-runtime", "forever":
		return "watcher"
	// Interpreters clawd has no option table for: the program or script
	// file they run (awk -f FILE, tclsh FILE) is named in arguments clawd
	// does not read.
	case "awk", "gawk", "mawk", "nawk", "original-awk", "goawk", "R", "r", "jjs", "racket", "sbcl", "clisp", "octave",
		"octave-cli", "groovy", "raku", "rakudo", "perl6", "ipython", "ipython3", "jruby", "jython", "osascript",
		"cscript", "wscript", "escript", "elixir", "julia", "erl", "runghc", "runhaskell", "dotnet-script", "truffleruby":
		return "interp"
	// Windows' python launcher runs the interpreter the script's #! line
	// or py.ini names (py.ini may name any command).
	case "py", "pyw":
		return "pylauncher"
	case "cmd":
		if runtime.GOOS == "windows" {
			return "wrapper" // cmd /c PROGRAM
		}
	}
	if pythonName.MatchString(name) {
		return "python"
	}
	if luaName.MatchString(name) {
		return "lua"
	}
	if interpName.MatchString(name) {
		return "interp"
	}
	if m := versionedName.FindStringSubmatch(name); m != nil {
		return launcherKind(m[1])
	}
	return ""
}

// FileHasher computes files' SHA-256 (lowercase hex): by path, and
// through an open descriptor (never by its name). The daemon passes
// chain.HashCache, which remembers a hash per file version, so a 100 MB
// node binary is read once, not at every spawn.
type FileHasher interface {
	Sum(path string) (string, error)
	SumFile(f *os.File) (string, error)
}

// plainHasher reads the whole file every time.
type plainHasher struct{}

func (plainHasher) Sum(path string) (string, error) {
	f, err := fileutil.OpenNoWait(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return plainHasher{}.SumFile(f)
}

func (plainHasher) SumFile(f *os.File) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", f.Name())
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashPath(p string) (string, error) { return plainHasher{}.Sum(p) }

func (m *Manager) hasher() FileHasher {
	if m.opts.Hasher != nil {
		return m.opts.Hasher
	}
	return plainHasher{}
}

// openHashed opens the executable read-only and hashes the open
// descriptor: the descriptor is what the spawn executes
// (proc.Cmd.ExecFile), so the hash is of the file that runs.
//
// before is the descriptor's state before it was hashed: a spawn compares
// it after the exec (unchangedSince) to catch a write into the same file
// in between, which executing the descriptor does not prevent.
func openHashed(h FileHasher, path string) (f *os.File, sum string, before os.FileInfo, err error) {
	f, err = fileutil.OpenNoWait(path)
	if err != nil {
		return nil, "", nil, fmt.Errorf("cannot open the executable %s to check it: %v", path, err)
	}
	if before, err = f.Stat(); err == nil {
		sum, err = h.SumFile(f)
	}
	if err != nil {
		f.Close()
		return nil, "", nil, fmt.Errorf("cannot read the executable %s to check it: %v", path, err)
	}
	return f, sum, before, nil
}

// unchangedSince reports whether the open file f still holds what was
// hashed as sum: it has the size and modification time it had in before
// and, where the platform has one, the same change time, which any write
// moves even when the writer resets the modification time. A change time
// that moved alone may be harmless metadata (a chmod, a hard link, the
// file unlinked or renamed over: the swap executing the descriptor
// defeats) or such a write followed by a link or rename to hide it, so
// then the descriptor is hashed again (h) and must still give sum. Within
// one tick of the file system's clock (Linux: a few ms) a write can go
// unseen.
func unchangedSince(f *os.File, before os.FileInfo, h FileHasher, sum string) bool {
	now, err := f.Stat()
	if err != nil {
		return false
	}
	if now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime()) {
		return false
	}
	// Where the change time is not read, both are 0: size and mtime decide.
	bt, _ := fileutil.ChangeTime(before)
	if nt, _ := fileutil.ChangeTime(now); bt == nt {
		return true
	}
	got, err := h.SumFile(f)
	return err == nil && got == sum
}

// verify asks the configured check whether l may run.
func (m *Manager) verify(server string, l Launch) error {
	if m.opts.VerifyLaunch != nil {
		return m.opts.VerifyLaunch(server, l)
	}
	return nil
}

// recheckScript hashes an interpreter's script again once the server has
// initialized, by which time the interpreter has read it. The script is
// checked before the spawn and then read by the interpreter by path, so a
// file swapped in between would run; this finds a swap that is still in
// place after initialize and ends the server. It cannot undo what the
// swapped script did while it started, and a swap put back before this
// check is not seen (docs/upstreams.md).
func recheckScript(l Launch) error {
	if l.Script == "" {
		return nil
	}
	sum, err := hashPath(l.Script)
	if err != nil {
		return fmt.Errorf("supply_chain_unverified: the script %s could not be read again after the server started (%v); the server was stopped", l.Script, err)
	}
	if sum != l.ScriptSHA256 {
		return fmt.Errorf("supply_chain_unverified: the script %s changed while the server started (sha256 %s, checked %s); the server was stopped", l.Script, sum, l.ScriptSHA256)
	}
	return nil
}

// Inspect resolves what cfg's command runs and hashes the executable, as a
// spawn would, without starting anything: what `clawd mcp add` and `clawd
// mcp allow NAME` show and pin. ${VAR} references in cfg.Env are resolved
// from this process's environment (they only matter for npm's cache
// location); one that cannot be resolved here is left out, since the
// daemon's environment, not this one, is what the server gets.
func Inspect(cfg ServerConfig) (Launch, error) {
	env := map[string]string{}
	for k, v := range cfg.Env {
		if r, err := expandMap(map[string]string{k: v}, nil); err == nil {
			env[k] = r[k]
		}
	}
	l, err := ResolveLaunch(cfg, env)
	if err != nil {
		return l, err
	}
	f, sum, _, err := openHashed(plainHasher{}, l.Exec)
	if err != nil {
		return l, err
	}
	f.Close()
	l.ExecSHA256 = sum
	return l, nil
}
