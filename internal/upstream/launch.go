package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
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
//     Refused (the names of kindNames, launch_kind.go; a name it does not
//     list is a plain executable).
//   - go, cargo, make and the other build tools, and the toolchains that
//     compile a script before running it (kotlin, scala-cli, dart...;
//     kindNames): they build (or fetch) what they run at every start;
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
//
// The steps run in a fixed order, and the first refusal wins: the
// command's kind, its subcommand, its options and script operand, the
// server's env, then the script file itself. An error (rather than
// Unpinned) means the command or the script cannot be found or read.
func launchPaths(cfg ServerConfig, env map[string]string) (Launch, error) {
	l := Launch{Command: append([]string{cfg.Command}, cfg.Args...)}
	exe, err := resolveCommand(cfg.Command, cfg.Cwd)
	if err != nil {
		return l, err
	}
	l.Exec = exe
	p := newLaunchProgram(cfg.Command, exe, env)
	if why := kindRefusal(p.kind, p.name); why != "" {
		l.Unpinned = why
		return l, nil
	}
	switch p.kind {
	case "":
		// A runner's own script run as the command (npm makes a bin
		// executable), under its path in node_modules or a link named
		// otherwise, is that runner: refused as `node SCRIPT` is.
		if l.Unpinned = runnerScriptRefusal(cfg.Command, exe); l.Unpinned == "" {
			l.Unpinned = shebangRefusal(exe, p.interpreters())
		}
		if l.Unpinned == "" {
			l.Unpinned = p.envRefusal()
		}
		return l, nil
	case "npx":
		l.Launcher = "npx"
		if l.Unpinned = p.envRefusal(); l.Unpinned == "" {
			l.Unpinned = resolveNpx(&l, cfg.Args, cfg.Cwd, env)
		}
		return l, nil
	}
	args, bunRun, why := runtimeSubcommand(p.kind, cfg.Args)
	if why != "" {
		l.Unpinned = why
		return l, nil
	}
	script, why := scriptOperand(p.kind, args, p.name, p.exeName)
	if why == "" {
		why = p.envRefusal(p.name, p.exeName)
	}
	if why == "" {
		why = operandRefusal(p.kind, p.name, script, bunRun)
	}
	if why != "" {
		l.Unpinned = why
		return l, nil
	}
	l.Script, l.Unpinned, err = scriptFile(script, cfg.Cwd, p.name)
	return l, err
}

// launchProgram is what launchPaths knows of a command before it reads
// the arguments: its rule kind, and the names it goes by.
type launchProgram struct {
	kind string
	// name is the configured command's program name, which messages use;
	// exeName the resolved executable's (a link's target may be named
	// otherwise: sh is often dash).
	name, exeName string
	exe           string
	env           map[string]string
	// shebang is what interpreters read, once shebangRead.
	shebang     []string
	shebangRead bool
}

// newLaunchProgram classifies command (resolved to exe): by the
// configured name, else by the resolved executable's, so a link named
// after nothing clawd knows that leads to python is read as python; an
// executable refused whatever its arguments is refused under any name.
func newLaunchProgram(command, exe string, env map[string]string) launchProgram {
	p := launchProgram{name: progName(command), exeName: progName(exe), exe: exe, env: env}
	if p.kind = launcherKind(p.name); p.kind == "" {
		p.kind = launcherKind(p.exeName)
	}
	// A name of one kind that leads to a program refused whatever its
	// arguments (a link named node to env or busybox, bash to gradle)
	// runs that program, with the resolved path as argv[0]: the name's
	// rules would pin the wrong file (./node sh x.sh pins a file named
	// sh, while env runs PATH's sh and x.sh unpinned).
	if k := launcherKind(p.exeName); k != p.kind && kindRefusal(k, p.exeName) != "" {
		p.kind, p.name = k, p.exeName
	}
	return p
}

// envRefusal is why the server's env makes p run code clawd cannot pin,
// or "" (envRefusal in launch_env.go). The env rules are those of what
// runs, not only of the command's name: python3 may be a bash shim, an
// npm bin a node script, so the interpreters of exe's #! line count too.
// names are the program names the kind's rules are keyed by (see
// envRuleKeys); the plain executable and npx pass none.
func (p *launchProgram) envRefusal(names ...string) string {
	if len(p.env) == 0 {
		return ""
	}
	progs := append([]envProgram{{p.kind, p.name, names}}, shebangPrograms(p.exe, p.interpreters())...)
	return envRefusal(p.env, p.name, progs)
}

// interpreters is shebangInterpreters(p.exe), read once: the refusals of
// a plain executable look at its #! line for its kind and its env alike.
func (p *launchProgram) interpreters() []string {
	if !p.shebangRead {
		p.shebang, p.shebangRead = shebangInterpreters(p.exe), true
	}
	return p.shebang
}

// runtimeSubcommand reads the subcommand of the runtimes that have one
// before the script: deno's run, bun's run and its built-in commands.
// It returns the arguments after it, whether bun was given run (which
// changes how bun reads the file name, bunReadsAsFile), or why the
// command is refused; jshell is refused here whatever its arguments. The
// other kinds' arguments come back as they are.
func runtimeSubcommand(kind string, args []string) (rest []string, bunRun bool, why string) {
	switch kind {
	case "deno":
		if len(args) == 0 || args[0] != "run" {
			return nil, false, "clawd pins `deno run [options] FILE`; other deno commands run code it cannot pin"
		}
		return args[1:], false, ""
	case "bun":
		if len(args) > 0 && (args[0] == "x" || args[0] == "add" || args[0] == "install") {
			return nil, false, "`bun " + args[0] + "` fetches a package that clawd cannot pin; install it and give its executable as the command"
		}
		if len(args) > 0 && slices.Contains(bunCommands, args[0]) {
			// bun reads its own command first, even where a file of
			// that name exists: `bun test` runs the test runner.
			return nil, false, "`bun " + args[0] + "` is a bun command, not a script clawd can pin; give `bun FILE` (or `bun run FILE`) with the server's file"
		}
		if len(args) > 0 && args[0] == "run" {
			return args[1:], true, ""
		}
	case "jshell":
		return nil, false, "jshell evaluates the code it reads (its startup snippets, then stdin, where clawd writes requests), which clawd cannot pin; " + javaFix
	}
	return args, false, ""
}

// scriptTargets are the kinds whose file is not the first operand after
// the options (launch_runtimes.go); every other kind is read by
// findScript with its option tables.
var scriptTargets = map[string]func(args []string) (string, string){
	"java":    javaTarget,
	"dotnet":  dotnetTarget,
	"rscript": rscriptTarget,
}

// scriptOperand is the script (or jar, or dll) argument of a command of
// kind given args (after any subcommand), as given, or why its options
// are refused. names are the program names whose option tables apply.
func scriptOperand(kind string, args []string, names ...string) (string, string) {
	if target := scriptTargets[kind]; target != nil {
		return target(args)
	}
	return findScript(kind, args, names...)
}

// operandRefusal is why the script operand (as given) names something
// other than a local file clawd can pin, or "": a URL (deno and bun also
// take a module specifier such as npm: or jsr:), or a name bun may read
// as a package.json script. It looks only at the text, not at the file.
func operandRefusal(kind, name, script string, bunRun bool) string {
	if strings.Contains(script, "://") || ((kind == "deno" || kind == "bun") && urlScheme.MatchString(script)) {
		return fmt.Sprintf("%s runs %s from the network, which clawd cannot pin; download it, check it, and run the local file", name, script)
	}
	if kind == "bun" && !bunReadsAsFile(script, bunRun) {
		return fmt.Sprintf("bun reads `%s` as the name of a package.json script first and runs that script's command in place of the file when the nearest package.json has one of that name (the server may add it), which clawd cannot pin; give the file as `./%s` (or its absolute path)", script, script)
	}
	return ""
}

// scriptFile resolves the script operand given (relative to cwd, else to
// clawd's working directory) to the regular file the interpreter named
// name will run, with symlinks resolved: the path to pin. why says why it
// cannot be pinned (a per-process path in /proc or /dev, not a regular
// file, a launcher's or runner's own script); err that it cannot be
// found. The file is not opened: it may still change before it is hashed
// and before the interpreter reads it (recheckScript).
func scriptFile(given, cwd, name string) (script, why string, err error) {
	script = given
	if !filepath.IsAbs(script) {
		base := cwd
		if base == "" {
			if base, err = os.Getwd(); err != nil {
				return "", "", err
			}
		}
		script = filepath.Join(base, script)
	}
	if perProcessPath(script) {
		return "", fmt.Sprintf("%s is (or leads through) a file of /proc or /dev, which names another file in the server's process than in clawd's (/dev/stdin is clawd's requests there), so clawd cannot pin what %s runs; name the script file itself", script, name), nil
	}
	if real, err := filepath.EvalSymlinks(script); err == nil {
		script = real
	}
	fi, err := os.Stat(script)
	if err != nil {
		return "", "", fmt.Errorf("the script %s that %s would run: %v", script, name, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Sprintf("%s is not a regular file, so clawd cannot pin what %s runs from it; name the script file itself", script, name), nil
	}
	if why := runnerScriptRefusal(given, script); why != "" {
		return "", why, nil
	}
	return script, "", nil
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

// bunCommands are bun's built-in commands, which it runs in place of a
// file of the same name (bun 1.3's `bun --help`).
var bunCommands = []string{"test", "repl", "build", "create", "c", "init", "pm", "link", "unlink", "patch", "patch-commit",
	"upgrade", "exec", "outdated", "publish", "audit", "info", "update", "remove", "rm", "why", "completions",
	"discord", "help", "i", "a"}

// verify asks the configured check whether l may run.
func (m *Manager) verify(server string, l Launch) error {
	if m.opts.VerifyLaunch != nil {
		return m.opts.VerifyLaunch(server, l)
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
