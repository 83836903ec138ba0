//go:build unix

package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// envTestSetup puts fake interpreters named progs on PATH and returns a
// working directory holding a script for each.
func envTestSetup(t *testing.T, progs ...string) string {
	t.Helper()
	fakeProgs(t, progs...)
	work := t.TempDir()
	for _, f := range []string{"x.js", "x.py", "x.pl", "x.rb", "x.php", "x.ts", "x.sh", "x.fish"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("// "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// envOf is a server's env from names and values.
func envOf(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

var nodeJS = []string{"node", "x.js"}

// node (and npx, which runs node): NODE_OPTIONS read with node's option
// checks, and the variables that load code at node's start.
func TestEnvNode(t *testing.T) {
	work := envTestSetup(t, "node", "npx")
	checkLaunchCases(t, work, []launchCase{
		// NODE_OPTIONS is read word by word, as node splits it (blanks,
		// double quotes, backslashes inside them), with node's own option
		// names (underscores are dashes).
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--require /tmp/evil.js"), unpinned: "NODE_OPTIONS"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--max-old-space-size=4096 -r /tmp/evil.js"), unpinned: "`-r`"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--import=/tmp/evil.mjs"), unpinned: "--import"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--loader ./hook.mjs"), unpinned: "--loader"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--experimental-loader=./hook.mjs"), unpinned: "--experimental-loader"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--experimental_loader=./hook.mjs"), unpinned: "--experimental_loader"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", `"--re\quire" "/tmp/my evil.js"`), unpinned: "NODE_OPTIONS"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", `--im"port" x.mjs`), unpinned: "NODE_OPTIONS"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--env-file=.env"), unpinned: "--env-file"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--experimental-config-file=node.json"), unpinned: "--experimental-config-file"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--openssl-config=/tmp/evil.cnf"), unpinned: "--openssl-config"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--snapshot-blob /tmp/snap.blob"), unpinned: "--snapshot-blob"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--watch"), unpinned: "--watch"},
		// The inspector: a debugger port anyone local can run code through.
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--inspect"), unpinned: "--inspect"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--inspect-brk=0.0.0.0:9229"), unpinned: "--inspect-brk"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--inspect-port=9230"), script: "x.js"},
		{cmd: nodeJS, env: envOf("NODE_OPTIONS", "--max-old-space-size=4096 --enable-source-maps --title=srv --no-warnings"), script: "x.js"},
		{cmd: nodeJS, env: envOf("NODE_COMPILE_CACHE", "/tmp/cache"), unpinned: "NODE_COMPILE_CACHE"},
		{cmd: nodeJS, env: envOf("OPENSSL_CONF", "/tmp/evil.cnf"), unpinned: "OPENSSL_CONF"},
		// Limits, not refused: where require looks, and the REPL module
		// (node never starts its REPL for a script).
		{cmd: nodeJS, env: envOf("NODE_PATH", "/opt/lib", "NODE_REPL_EXTERNAL_MODULE", "/tmp/repl.js", "NODE_EXTRA_CA_CERTS", "/etc/ca.pem"), script: "x.js"},
		// npx runs node, and node runs the package.
		{cmd: []string{"npx", "-y", "pkg@1.0.0"}, env: envOf("NODE_OPTIONS", "--require /tmp/evil.js"), unpinned: "NODE_OPTIONS"},
		// What only npx, sh or fish reads as code passes (another
		// runtime's own variables do not: TestEnvOtherRuntimesInARuntime).
		{cmd: nodeJS, env: envOf("HOME", "/tmp/evil", "PREFIX", "/tmp/evil", "ENV", "/tmp/x.sh", "XDG_CONFIG_HOME", "/tmp/evil"), script: "x.js"},
	})
}

// npx is npm: its configuration, from npm_config_* (the prefix in any
// case, the rest too, underscores for dashes) or from the .npmrc files it
// names or finds under HOME or the global prefix, can make it run other
// code: node options for the package's node, the shell the command runs
// in, another package installed (its install scripts run) first.
func TestEnvNpx(t *testing.T) {
	work := envTestSetup(t, "node", "npx")
	t.Setenv("npm_config_cache", t.TempDir())
	npx := []string{"npx", "-y", "pkg@1.0.0"}
	checkLaunchCases(t, work, []launchCase{
		{cmd: npx, env: envOf("npm_config_node_options", "--require /tmp/evil.js"), unpinned: "npm_config_node_options"},
		{cmd: npx, env: envOf("NPM_CONFIG_NODE_OPTIONS", "--import=/tmp/evil.mjs"), unpinned: "NPM_CONFIG_NODE_OPTIONS"},
		{cmd: npx, env: envOf("Npm_Config_Node_Options", "-r /tmp/evil.js"), unpinned: "Npm_Config_Node_Options"},
		{cmd: npx, env: envOf("npm_config_node-options", "--require=/tmp/evil.js"), unpinned: "npm_config_node-options"},
		{cmd: npx, env: envOf("npm_config_script_shell", "/tmp/evil.sh"), unpinned: "npm_config_script_shell"},
		{cmd: npx, env: envOf("NPM_CONFIG_SCRIPT_SHELL", "/tmp/evil.sh"), unpinned: "NPM_CONFIG_SCRIPT_SHELL"},
		{cmd: npx, env: envOf("npm_config_userconfig", "/tmp/evil.npmrc"), unpinned: "npm_config_userconfig"},
		{cmd: npx, env: envOf("npm_config_globalconfig", "/tmp/evil.npmrc"), unpinned: "npm_config_globalconfig"},
		{cmd: npx, env: envOf("npm_config_prefix", "/tmp/evil"), unpinned: "npm_config_prefix"},
		{cmd: npx, env: envOf("npm_config_package", "evil@1.0.0"), unpinned: "npm_config_package"},
		{cmd: npx, env: envOf("HOME", "/tmp/evil"), unpinned: "HOME"},
		{cmd: npx, env: envOf("PREFIX", "/tmp/evil"), unpinned: "PREFIX"},
		{cmd: npx, env: envOf("DESTDIR", "/tmp/evil"), unpinned: "DESTDIR"},
		// npm's node options are read as NODE_OPTIONS is.
		{cmd: npx, env: envOf("npm_config_node_options", "--max-old-space-size=4096"), unpinned: "not in npx's cache"},
		// Empty values are not read; the cache, the log level, the registry
		// and other settings pass (the package must be in the cache or the
		// project's tree with the pinned integrity).
		{cmd: npx, env: envOf("npm_config_script_shell", "", "npm_config_cache", "/tmp/c", "npm_config_loglevel", "silent",
			"NPM_CONFIG_REGISTRY", "https://registry.example/", "npm_config_prefix_x", "1"), unpinned: "not in npx's cache"},
	})
}

// python: the variables that make it read code from stdin or load compiled
// code from elsewhere; the search paths are a documented limit.
func TestEnvPython(t *testing.T) {
	work := envTestSetup(t, "python3")
	checkLaunchCases(t, work, []launchCase{
		// python: PYTHONINSPECT makes python read stdin (clawd's requests)
		// as code once the script ends, whatever its value.
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONINSPECT", "1"), unpinned: "PYTHONINSPECT"},
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONWARNINGS", "ignore::DeprecationWarning,ignore::evilmod.W"), unpinned: "evilmod"},
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONWARNINGS", "ignore::DeprecationWarning"), script: "x.py"},
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONINSPECT", "0"), unpinned: "PYTHONINSPECT"},
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONPYCACHEPREFIX", "/tmp/pyc"), unpinned: "PYTHONPYCACHEPREFIX"},
		// A debug build imports PYTHON_PRESITE's module before site.
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHON_PRESITE", "evil"), unpinned: "PYTHON_PRESITE"},
		// Where python finds its standard library and site directories,
		// whose .pth files and sitecustomize run at every start: its home
		// (PYTHONHOME, PYTHONPLATLIBDIR), a venv of the executable it is
		// told it is (PYTHONEXECUTABLE, __PYVENV_LAUNCHER__), the user's
		// site directory (PYTHONUSERBASE, else under HOME, APPDATA on
		// Windows), unless user site directories are off.
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONHOME", "/tmp/py"), unpinned: "PYTHONHOME"},
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONPLATLIBDIR", "/tmp/py"), unpinned: "PYTHONPLATLIBDIR"},
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONEXECUTABLE", "/tmp/venv/bin/python"), unpinned: "PYTHONEXECUTABLE"},
		{cmd: []string{"python3", "x.py"}, env: envOf("__PYVENV_LAUNCHER__", "/tmp/venv/bin/python"), unpinned: "__PYVENV_LAUNCHER__"},
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONUSERBASE", "/tmp/ub"), unpinned: "PYTHONUSERBASE"},
		{cmd: []string{"python3", "x.py"}, env: envOf("HOME", "/tmp/home"), unpinned: "PYTHONNOUSERSITE"},
		{cmd: []string{"python3", "x.py"}, env: envOf("APPDATA", "/tmp/appdata"), unpinned: "APPDATA"},
		{cmd: []string{"python3", "x.py"}, env: envOf("HOME", "/tmp/home", "PYTHONNOUSERSITE", ""), unpinned: "HOME"},
		// python reads a flag's 0 as off.
		{cmd: []string{"python3", "x.py"}, env: envOf("HOME", "/tmp/home", "PYTHONNOUSERSITE", "0"), unpinned: "HOME"},
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONUSERBASE", "/tmp/ub", "PYTHONNOUSERSITE", " -0"), unpinned: "PYTHONUSERBASE"},
		{cmd: []string{"python3", "x.py"}, env: envOf("HOME", "/tmp/home", "PYTHONNOUSERSITE", "yes"), script: "x.py"},
		{cmd: []string{"python3", "x.py"}, env: envOf("HOME", "/tmp/home", "PYTHONUSERBASE", "/tmp/ub", "APPDATA", "/tmp/a", "PYTHONNOUSERSITE", "1"), script: "x.py"},
		// The module search path is a limit; PYTHONSTARTUP is read only by
		// the interactive interpreter; the rest load nothing (an unknown
		// PYTHONIOENCODING is an error, not an import).
		{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONPATH", "/opt/lib", "PYTHONSTARTUP", "/tmp/s.py", "PYTHONIOENCODING", "utf-8",
			"PYTHONSAFEPATH", "1", "PYTHONUNBUFFERED", "1", "PYTHONINSPECT", "", "PYTHONHOME", ""), script: "x.py"},
	})
}

// perl: the options it reads from PERL5OPT that load modules or the
// debugger, and the debugger's code.
func TestEnvPerl(t *testing.T) {
	work := envTestSetup(t, "perl")
	checkLaunchCases(t, work, []launchCase{
		// perl reads -[CDIMUdmtwW] from PERL5OPT, a leading "-" optional.
		{cmd: []string{"perl", "x.pl"}, env: envOf("PERL5OPT", "-MEvil"), unpinned: "PERL5OPT"},
		{cmd: []string{"perl", "x.pl"}, env: envOf("PERL5OPT", "-w -mEvil"), unpinned: "`-mEvil`"},
		{cmd: []string{"perl", "x.pl"}, env: envOf("PERL5OPT", "MEvil"), unpinned: "PERL5OPT"},
		{cmd: []string{"perl", "x.pl"}, env: envOf("PERL5OPT", "-wd:Evil"), unpinned: "PERL5OPT"},
		{cmd: []string{"perl", "x.pl"}, env: envOf("PERL5DB", "BEGIN { system 'x' }"), unpinned: "PERL5DB"},
		{cmd: []string{"perl", "x.pl"}, env: envOf("PERL5OPT", "-w -CSDA -I/opt/lib/Mod", "PERL5LIB", "/opt/lib"), script: "x.pl"},
	})
}

// ruby: -r (a library required before the script) in RUBYOPT.
func TestEnvRuby(t *testing.T) {
	work := envTestSetup(t, "ruby")
	checkLaunchCases(t, work, []launchCase{
		// ruby reads -r (and others) from RUBYOPT, a leading "-" optional
		// since Ruby 3.4.
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBYOPT", "-r/tmp/evil"), unpinned: "RUBYOPT"},
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBYOPT", "-w -r evil"), unpinned: "RUBYOPT"},
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBYOPT", "-wrevil"), unpinned: "RUBYOPT"},
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBYOPT", "rubygems"), unpinned: "RUBYOPT"},
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBYOPT", "-W:no-deprecated -W2"), script: "x.rb"},
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBYOPT", "-W0 -Eutf-8 --disable-gems -I /usr/lib/ruby/r", "RUBYLIB", "/opt/lib"), script: "x.rb"},
		// RubyGems, loaded at every start, requires BUNDLER_SETUP; the
		// executables gems install load the Gemfile (Ruby code)
		// RUBYGEMS_GEMDEPS names; a crash report can go to a command.
		{cmd: []string{"ruby", "x.rb"}, env: envOf("BUNDLER_SETUP", "/tmp/evil.rb"), unpinned: "BUNDLER_SETUP"},
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBYGEMS_GEMDEPS", "/tmp/Gemfile"), unpinned: "RUBYGEMS_GEMDEPS"},
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBY_CRASH_REPORT", "|/tmp/evil"), unpinned: "RUBY_CRASH_REPORT"},
		// Limits: the gems' directories, and the Gemfile bundler/setup
		// reads when the script requires it.
		{cmd: []string{"ruby", "x.rb"}, env: envOf("GEM_HOME", "/opt/gems", "GEM_PATH", "/opt/gems", "BUNDLE_GEMFILE", "/srv/Gemfile"), script: "x.rb"},
	})
}

// Rscript: R sources R_TESTS at every start (even --vanilla), loads the
// packages R_DEFAULT_PACKAGES names, and R's start script sources and runs
// files under R_ARCH, a path relative to R's home.
func TestEnvRscript(t *testing.T) {
	work := envTestSetup(t, "Rscript")
	if err := os.WriteFile(filepath.Join(work, "x.R"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := []string{"Rscript", "x.R"}
	checkLaunchCases(t, work, []launchCase{
		{cmd: r, env: envOf("R_TESTS", "/tmp/evil.R"), unpinned: "R_TESTS"},
		{cmd: r, env: envOf("R_DEFAULT_PACKAGES", "evilpkg"), unpinned: "R_DEFAULT_PACKAGES"},
		{cmd: r, env: envOf("R_ARCH", "/../../../../tmp/evil"), unpinned: "R_ARCH"},
		{cmd: r, env: envOf("R_DEFAULT_PACKAGES", "NULL", "R_LIBS", "/opt/r", "R_LIBS_USER", "/opt/r"), script: "x.R"},
		// R sources ~/.Rprofile and reads ~/.Renviron (without one in
		// the working directory): HOME moves them, as R_PROFILE_USER does.
		{cmd: r, env: envOf("HOME", "/tmp/evil"), unpinned: "HOME"},
		{cmd: r, env: envOf("R_USER", "/tmp/evil"), unpinned: "R_USER"},
	})
}

// php: the ini files, which can auto_prepend_file any script.
func TestEnvPHP(t *testing.T) {
	work := envTestSetup(t, "php")
	checkLaunchCases(t, work, []launchCase{
		// php: an ini file can auto_prepend_file any script.
		{cmd: []string{"php", "x.php"}, env: envOf("PHPRC", "/tmp/php.ini"), unpinned: "PHPRC"},
		{cmd: []string{"php", "x.php"}, env: envOf("PHP_INI_SCAN_DIR", ":/tmp/ini"), unpinned: "PHP_INI_SCAN_DIR"},
		{cmd: []string{"php", "x.php"}, env: envOf("PHP_INI_SCAN_DIR", ""), script: "x.php"},
		// Xdebug's settings and triggers: its debugger runs what its
		// client sends.
		{cmd: []string{"php", "x.php"}, env: envOf("XDEBUG_MODE", "debug"), unpinned: "XDEBUG_MODE"},
		{cmd: []string{"php", "x.php"}, env: envOf("XDEBUG_CONFIG", "client_host=10.0.0.5 start_with_request=yes"), unpinned: "XDEBUG_CONFIG"},
		{cmd: []string{"php", "x.php"}, env: envOf("XDEBUG_SESSION", "1"), unpinned: "XDEBUG_SESSION"},
		{cmd: []string{"php", "x.php"}, env: envOf("XDEBUG_TRIGGER", "x"), unpinned: "XDEBUG_TRIGGER"},
		{cmd: []string{"php", "x.php"}, env: envOf("XDEBUG_MODE", "off"), script: "x.php"},
	})
}

// deno and bun: the variables that load code or compiled code.
func TestEnvDenoBun(t *testing.T) {
	work := envTestSetup(t, "deno", "bun")
	checkLaunchCases(t, work, []launchCase{
		// deno: its cache holds compiled code and remote modules; a
		// type-checker binary runs for --check.
		{cmd: []string{"deno", "run", "x.ts"}, env: envOf("DENO_DIR", "/tmp/deno"), unpinned: "DENO_DIR"},
		{cmd: []string{"deno", "run", "x.ts"}, env: envOf("DENO_TSC_BIN", "/tmp/tsc"), unpinned: "DENO_TSC_BIN"},
		{cmd: []string{"deno", "run", "x.ts"}, env: envOf("DENO_V8_FLAGS", "--max-old-space-size=512", "DENO_NO_UPDATE_CHECK", "1"), script: "x.ts"},
		// Without DENO_DIR the cache is under XDG_CACHE_HOME, else HOME.
		{cmd: []string{"deno", "run", "x.ts"}, env: envOf("XDG_CACHE_HOME", "/tmp/evil"), unpinned: "XDG_CACHE_HOME"},
		{cmd: []string{"deno", "run", "x.ts"}, env: envOf("HOME", "/tmp/evil"), unpinned: "HOME"},
		{cmd: []string{"deno", "run", "x.ts"}, env: envOf("XDG_CONFIG_HOME", "/tmp/c"), script: "x.ts"},
		// bun: BUN_OPTIONS is read like bun's options; the transpiler cache.
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_OPTIONS", "--preload ./evil.ts"), unpinned: "BUN_OPTIONS"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_OPTIONS", `"-r" evil.ts`), unpinned: "BUN_OPTIONS"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_OPTIONS", "-r./evil.ts"), unpinned: "BUN_OPTIONS"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("NODE_OPTIONS", "--import ./evil.ts"), unpinned: "NODE_OPTIONS"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_OPTIONS", "--hot"), unpinned: "--hot"},
		// bun's inspector, from BUN_OPTIONS or the variables its editor
		// integrations set (BUN_INSPECT_CONNECT_TO dials out to a debugger,
		// BUN_INSPECT_PRELOAD preloads a module).
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_OPTIONS", "--inspect=0.0.0.0:6499"), unpinned: "--inspect"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_INSPECT", "ws://localhost:6499/x?wait=1"), unpinned: "BUN_INSPECT"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_INSPECT_CONNECT_TO", "unix:///tmp/d.sock"), unpinned: "BUN_INSPECT_CONNECT_TO"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_INSPECT_PRELOAD", "/tmp/evil.ts"), unpinned: "BUN_INSPECT_PRELOAD"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_OPTIONS", "--cwd=/tmp/elsewhere"), unpinned: "--cwd"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_RUNTIME_TRANSPILER_CACHE_PATH", "/tmp/pile"), unpinned: "BUN_RUNTIME_TRANSPILER_CACHE_PATH"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_OPTIONS", "--smol", "BUN_RUNTIME_TRANSPILER_CACHE_PATH", "0"), script: "x.ts"},
		// Without BUN_RUNTIME_TRANSPILER_CACHE_PATH the cache is under
		// XDG_CACHE_HOME, else HOME (USERPROFILE on Windows); "0" turns it
		// off, and then they pass.
		{cmd: []string{"bun", "x.ts"}, env: envOf("XDG_CACHE_HOME", "/tmp/evil"), unpinned: "BUN_RUNTIME_TRANSPILER_CACHE_PATH=0"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("HOME", "/tmp/evil"), unpinned: "HOME"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("USERPROFILE", "/tmp/evil"), unpinned: "USERPROFILE"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("HOME", "/tmp/h", "XDG_CACHE_HOME", "/tmp/c", "BUN_RUNTIME_TRANSPILER_CACHE_PATH", "0"), script: "x.ts"},
	})
}

// .NET: the host's and the runtime's variables that load code, for dotnet
// FILE.dll and for every other program too, since a published .NET app is
// an executable of its own (an apphost) that starts the runtime and reads
// them the same way. The runtime's knobs are read as DOTNET_NAME, then
// COMPlus_NAME; on Linux and macOS in that exact case (the host's getenv
// and the runtime's own copy of the environment compare bytes), on Windows
// in any case, as every variable there.
func TestEnvDotnet(t *testing.T) {
	work := envTestSetup(t, "dotnet", "mytool")
	if err := os.WriteFile(filepath.Join(work, "app.dll"), []byte("MZ"), 0o644); err != nil {
		t.Fatal(err)
	}
	app := []string{"dotnet", "app.dll"}
	checkLaunchCases(t, work, []launchCase{
		{cmd: app, env: envOf("COMPlus_GCPath", "/tmp/libgc.so"), unpinned: "COMPlus_GCPath"},
		{cmd: app, env: envOf("COMPlus_DiagnosticPorts", "/tmp/port,connect"), unpinned: "COMPlus_DiagnosticPorts"},
		// Before .NET 9 the GC's name is a path relative to the runtime's
		// directory (../../../tmp/libgc.so); since, a file looked for
		// beside the app first.
		{cmd: app, env: envOf("DOTNET_GCName", "../../../../tmp/libgc.so"), unpinned: "DOTNET_GCName"},
		{cmd: app, env: envOf("COMPlus_GCName", "libclrgc.so"), unpinned: "COMPlus_GCName"},
		{cmd: app, env: envOf("CORECLR_ENABLE_NOTIFICATION_PROFILERS", "1"), unpinned: "CORECLR_ENABLE_NOTIFICATION_PROFILERS"},
		{cmd: app, env: envOf("DOTNET_SHARED_STORE", "/tmp/store"), unpinned: "DOTNET_SHARED_STORE"},
		{cmd: app, env: envOf("DOTNET_BUNDLE_EXTRACT_BASE_DIR", "/tmp/x"), unpinned: "DOTNET_BUNDLE_EXTRACT_BASE_DIR"},
		{cmd: app, env: envOf("DOTNET_ROOT", "/tmp/dotnet"), unpinned: "DOTNET_ROOT"},
		{cmd: app, env: envOf("DOTNET_ROOT_X64", "/tmp/dotnet"), unpinned: "DOTNET_ROOT_X64"},
		// A published app (its apphost), or any program that starts .NET.
		{cmd: []string{"mytool"}, env: envOf("DOTNET_STARTUP_HOOKS", "/tmp/hook.dll"), unpinned: "DOTNET_STARTUP_HOOKS"},
		{cmd: []string{"mytool"}, env: envOf("CORECLR_ENABLE_PROFILING", "1"), unpinned: "CORECLR_ENABLE_PROFILING"},
		{cmd: []string{"mytool"}, env: envOf("DOTNET_ADDITIONAL_DEPS", "/tmp/x.deps.json"), unpinned: "DOTNET_ADDITIONAL_DEPS"},
		{cmd: []string{"mytool"}, env: envOf("DOTNET_ROOT", "/tmp/dotnet"), unpinned: "DOTNET_ROOT"},
		// .NET Framework (Windows): its profiler and AppDomainManager.
		{cmd: []string{"mytool"}, env: envOf("COR_ENABLE_PROFILING", "1"), unpinned: "COR_ENABLE_PROFILING"},
		{cmd: []string{"mytool"}, env: envOf("APPDOMAIN_MANAGER_ASM", "Evil, Version=1.0.0.0"), unpinned: "APPDOMAIN_MANAGER_ASM"},
		// Settings that load nothing pass, and so do names the runtime
		// does not read on unix (another case).
		{cmd: app, env: envOf("DOTNET_gcServer", "1", "COMPlus_gcServer", "1", "DOTNET_TieredPGO", "0", "CORECLR_ENABLE_PROFILING", "0",
			"CORECLR_ENABLE_NOTIFICATION_PROFILERS", "0", "COR_ENABLE_PROFILING", "0", "DOTNET_CLI_TELEMETRY_OPTOUT", "1",
			"dotnet_startup_hooks", "/tmp/hook.dll", "DOTNET_gcpath", "/tmp/libgc.so"), script: "app.dll"},
	})
}

// The shells: the startup files (and code) they read for a script.
func TestEnvShells(t *testing.T) {
	work := envTestSetup(t, "bash", "sh", "dash", "ash", "ksh", "mksh", "yash", "zsh", "fish", "csh", "tcsh")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"bash", "x.sh"}, env: envOf("BASH_ENV", "/tmp/evil.sh"), unpinned: "BASH_ENV"},
		{cmd: []string{"bash", "x.sh"}, env: envOf("PS4", "$(evil)"), unpinned: "PS4"},
		// bash sets the shopt options BASHOPTS lists at its start:
		// extdebug runs the debugger's profile, as -O extdebug does.
		{cmd: []string{"bash", "x.sh"}, env: envOf("BASHOPTS", "checkwinsize:extdebug"), unpinned: "BASHOPTS"},
		{cmd: []string{"sh", "x.sh"}, env: envOf("BASHOPTS", "extdebug"), unpinned: "BASHOPTS"},
		{cmd: []string{"bash", "x.sh"}, env: envOf("BASHOPTS", "nullglob:extglob"), script: "x.sh"},
		{cmd: []string{"sh", "x.sh"}, env: envOf("BASH_ENV", "/tmp/evil.sh"), unpinned: "BASH_ENV"},
		{cmd: []string{"sh", "x.sh"}, env: envOf("ENV", "/tmp/evil.sh"), unpinned: "`ENV`"},
		{cmd: []string{"ash", "x.sh"}, env: envOf("ENV", "/tmp/evil.sh"), unpinned: "`ENV`"},
		{cmd: []string{"ksh", "x.sh"}, env: envOf("ENV", "/tmp/evil.sh"), unpinned: "`ENV`"},
		{cmd: []string{"zsh", "x.sh"}, env: envOf("ZDOTDIR", "/tmp/evil"), unpinned: "ZDOTDIR"},
		{cmd: []string{"zsh", "x.sh"}, env: envOf("HOME", "/tmp/evil"), unpinned: "HOME"},
		{cmd: []string{"fish", "x.fish"}, env: envOf("XDG_CONFIG_HOME", "/tmp/evil"), unpinned: "XDG_CONFIG_HOME"},
		{cmd: []string{"fish", "x.fish"}, env: envOf("XDG_DATA_DIRS", "/tmp/evil"), unpinned: "XDG_DATA_DIRS"},
		{cmd: []string{"tcsh", "x.sh"}, env: envOf("HOME", "/tmp/evil"), unpinned: "HOME"},
		{cmd: []string{"csh", "x.sh"}, env: envOf("HOME", "/tmp/evil"), unpinned: "HOME"},
		// ENV is read by dash, mksh, yash and bash for interactive shells
		// only (clawd refuses -i); HOME means nothing to dash (BASH_ENV is
		// refused whatever the command: dash may start bash).
		{cmd: []string{"dash", "x.sh"}, env: envOf("ENV", "/tmp/x.sh", "HOME", "/tmp"), script: "x.sh"},
		{cmd: []string{"mksh", "x.sh"}, env: envOf("ENV", "/tmp/x.sh"), script: "x.sh"},
		{cmd: []string{"yash", "x.sh"}, env: envOf("ENV", "/tmp/x.sh"), script: "x.sh"},
		{cmd: []string{"bash", "x.sh"}, env: envOf("ENV", "/tmp/x.sh", "HOME", "/tmp", "PATH", "/usr/bin"), script: "x.sh"},
		// bash imports a function only from BASH_FUNC_name%%, a name
		// ServerConfig.Validate refuses (TestConfigValidation); from an
		// identifier it imports nothing.
		{cmd: []string{"bash", "x.sh"}, env: envOf("BASH_FUNC_ls", "() { evil; }"), script: "x.sh"},
	})
}

// Every program, whatever its command (a plain executable too, and the
// fetchers and wrappers, refused anyway): the dynamic loader's preload and
// audit libraries, and glibc's gconv modules, are code loaded into it.
// Library search paths are a limit, not refused.
func TestEnvEveryProgram(t *testing.T) {
	work := envTestSetup(t, "mytool", "node", "python3", "npx")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"mytool", "--stdio"}, env: envOf("LD_PRELOAD", "/tmp/evil.so"), unpinned: "LD_PRELOAD"},
		{cmd: []string{"mytool"}, env: envOf("LD_AUDIT", "/tmp/evil.so"), unpinned: "LD_AUDIT"},
		{cmd: []string{"mytool"}, env: envOf("DYLD_INSERT_LIBRARIES", "/tmp/evil.dylib"), unpinned: "DYLD_INSERT_LIBRARIES"},
		{cmd: []string{"mytool"}, env: envOf("GCONV_PATH", "/tmp/gconv"), unpinned: "GCONV_PATH"},
		{cmd: nodeJS, env: envOf("LD_PRELOAD", "/tmp/evil.so"), unpinned: "LD_PRELOAD"},
		{cmd: []string{"python3", "x.py"}, env: envOf("LD_AUDIT", "/tmp/evil.so"), unpinned: "LD_AUDIT"},
		{cmd: []string{"npx", "-y", "pkg@1.0.0"}, env: envOf("LD_PRELOAD", "/tmp/evil.so"), unpinned: "LD_PRELOAD"},
		{cmd: []string{"mytool"}, env: envOf("LD_PRELOAD", "", "LD_LIBRARY_PATH", "/opt/lib", "DYLD_LIBRARY_PATH", "/opt/lib", "PATH", "/usr/bin")},
		// OpenSSL's configuration, read by whatever initializes OpenSSL
		// (python's ssl and hashlib, curl, ssh...), can load providers and
		// engines, shared libraries: from a path it names, or by name from
		// OPENSSL_MODULES and OPENSSL_ENGINES; OPENSSL_CONF_INCLUDE is where
		// its relative .include files are read from.
		{cmd: []string{"python3", "x.py"}, env: envOf("OPENSSL_CONF", "/tmp/evil.cnf"), unpinned: "OPENSSL_CONF"},
		{cmd: []string{"mytool"}, env: envOf("OPENSSL_CONF", "/tmp/evil.cnf"), unpinned: "OPENSSL_CONF"},
		{cmd: []string{"mytool"}, env: envOf("OPENSSL_MODULES", "/tmp/mods"), unpinned: "OPENSSL_MODULES"},
		{cmd: []string{"mytool"}, env: envOf("OPENSSL_ENGINES", "/tmp/engines"), unpinned: "OPENSSL_ENGINES"},
		{cmd: []string{"mytool"}, env: envOf("OPENSSL_CONF_INCLUDE", "/tmp/inc"), unpinned: "OPENSSL_CONF_INCLUDE"},
		// Certificates are data.
		{cmd: []string{"python3", "x.py"}, env: envOf("SSL_CERT_FILE", "/etc/ca.pem", "SSL_CERT_DIR", "/etc/ssl/certs"), script: "x.py"},
	})
}

// The rules follow the program the command resolves to when its own name
// is not one clawd knows (a link named otherwise).
func TestEnvRulesFollowTheResolvedProgram(t *testing.T) {
	dir := fakeProgs(t, "zsh")
	if err := os.Symlink(filepath.Join(dir, "zsh"), filepath.Join(dir, "myshell")); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "x.sh"), []byte("true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"myshell", "x.sh"}, env: map[string]string{"ZDOTDIR": "/tmp/evil"}, unpinned: "ZDOTDIR"},
	})
}

// An approved `node server.js` whose configured env gains
// NODE_OPTIONS=--require: node and the script are unchanged and approved,
// but the new configuration is not started (the running one keeps
// serving, its last error naming the variable), and a manager that starts
// with it (a daemon restart) leaves the server unavailable.
func TestNodeOptionsInEnvNotStarted(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "preloaded")
	// Stands in for node: runs the fake server, and shows whether it was
	// started with NODE_OPTIONS set.
	nodeBin := filepath.Join(dir, "node")
	if err := os.WriteFile(nodeBin, []byte("#!/bin/sh\n[ -n \"$NODE_OPTIONS\" ] && touch "+marker+"\nexec "+fakeBin+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "server.js")
	if err := os.WriteFile(script, []byte("// approved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fake("nodesrv")
	cfg.Command, cfg.Args, cfg.Cwd = nodeBin, []string{"server.js"}, dir
	l, err := ResolveLaunch(cfg, nil)
	if err != nil || l.Unpinned != "" || l.Script == "" {
		t.Fatalf("resolve: %v %q; script %q", err, l.Unpinned, l.Script)
	}
	a := &approvals{exec: map[string]bool{fileSum(t, nodeBin): true}, scripts: map[string]bool{l.ScriptSHA256: true}}
	m, _ := newTestManager(t, Options{VerifyLaunch: a.verify})
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "nodesrv")

	evil := cfg
	evil.Env = map[string]string{"NODE_OPTIONS": "--require " + filepath.Join(dir, "evil.js")}
	m.Apply(context.Background(), []ServerConfig{evil})
	st := waitFor(t, m, "nodesrv", 20*time.Second, "the new configuration refused", func(s Status) bool {
		return strings.Contains(s.LastError, "NODE_OPTIONS")
	})
	if !strings.Contains(st.LastError, "supply_chain_unverified") || !strings.Contains(st.LastError, "not applied") {
		t.Errorf("last error %q; want the new configuration refused, the previous one serving", st.LastError)
	}

	m2, _ := newTestManager(t, Options{VerifyLaunch: a.verify})
	m2.Apply(context.Background(), []ServerConfig{evil})
	st = waitFor(t, m2, "nodesrv", 20*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	if !strings.Contains(st.LastError, "supply_chain_unverified") || !strings.Contains(st.LastError, "NODE_OPTIONS") {
		t.Errorf("last error %q; want the refusal to name NODE_OPTIONS", st.LastError)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("node was started with NODE_OPTIONS")
	}
}
