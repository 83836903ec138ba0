package upstream

import "slices"

// The variables of a server's configured env (what `clawd mcp add --env`
// or the API set) that make the program the command runs load or run code
// besides the file approval pins: a startup file or its directory, options
// that preload a module, code in the value itself, a cache of compiled
// code used in place of the source, an interactive mode that reads
// clawd's requests as code, a configuration that loads libraries or runs
// commands (OpenSSL's, npm's), or the installation or site directories a
// runtime runs code from at its start (PYTHONHOME, DOTNET_ROOT, RHOME).
// Such a variable is refused (Launch.Unpinned).
//
// Not checked: clawd's own environment, which every server inherits
// (whoever sets it can load code into clawd itself), and the module search
// paths (NODE_PATH, PYTHONPATH, PERL5LIB, RUBYLIB, LUA_PATH...), which
// servers need and which change what a module the program asks for
// resolves to; docs/upstreams.md lists them as limits.

// envRule is one variable, or with a trailing "*" every variable starting
// with the rest, or an npm setting (npm), that makes a program run code
// clawd cannot pin.
type envRule struct {
	name string
	// off are the values that leave it off, besides "".
	off []string
	// opts, when set, reads the value as the program's options (see
	// optionWords) and says why one of them loads code, or "": only such
	// an option is refused, not the variable.
	opts func(words []string) string
	// does completes "the server's env sets NAME, which ...", with %s for
	// the program's name (loadsCode when empty).
	does string
	// npm says name is an npm setting (node-options), matched the way npm
	// reads npm_config_* variables (see npmSetting).
	npm bool
	// unless is a flag variable of python's that, set on in the server's
	// env (flagOn), turns the rule off; the refusal names it as the other
	// fix.
	unless string
}

const (
	loadsCode      = "makes %s load code clawd cannot pin before or beside the file it pins"
	startupFile    = "names a startup file (or its directory) that %s runs before the script"
	codeCache      = "names a cache of compiled code %s runs in place of the files it compiles, which clawd does not check"
	preloadLib     = "makes the dynamic loader load a library clawd cannot pin into %s before its own code"
	opensslLoads   = "names the OpenSSL configuration %s reads when it uses OpenSSL, which can load shared libraries (providers, engines)"
	pythonSite     = "moves where %s finds its standard library and site directories, whose .pth files and sitecustomize it runs at every start"
	pythonVenv     = "names the executable %s takes itself for, whose directory's pyvenv.cfg makes it a venv whose .pth files and sitecustomize it runs at every start"
	pythonUserSite = "moves %s's user site directory, whose .pth files and usercustomize it runs at every start"
	npmrc          = "names an npm configuration file, whose settings (node-options, script-shell) can make %s run other code"
	npmPrefix      = "moves npm's global prefix, whose etc/npmrc settings (node-options, script-shell) can make %s run other code, and whose packages it may run"
	npmHome        = "names the home directory whose .npmrc settings (node-options, script-shell) can make %s run other code"
)

// allPrograms is the envRules key whose rules apply to every stdio
// server's command.
const allPrograms = "*"

// envRules are the rules per program: by rule name for most runtimes, by
// program name for the shells, whose rules differ (see envRuleKeys).
var envRules = map[string][]envRule{
	// Every program, whatever its command (allPrograms): libraries the
	// dynamic loader loads into it before its own code runs (glibc's
	// LD_PRELOAD and LD_AUDIT, macOS's DYLD_INSERT_LIBRARIES), and
	// glibc's character-conversion modules, shared libraries iconv loads
	// from GCONV_PATH. The loaders' search paths (LD_LIBRARY_PATH,
	// DYLD_LIBRARY_PATH...) only change where a library the program asks
	// for is found: a limit, like the runtimes' module paths.
	//
	// And OpenSSL's: any program that initializes OpenSSL reads its
	// configuration (python's ssl and hashlib, node, curl, ssh...), which
	// can load providers and engines, shared libraries, from a path it
	// names or by name from OPENSSL_MODULES and OPENSSL_ENGINES (where a
	// provider or engine the program itself loads by name comes from
	// too); OPENSSL_CONF_INCLUDE is where a configuration's relative
	// .include files are read from.
	//
	// And .NET's, for dotnet FILE.dll and every other program: a published
	// .NET app is an executable of its own (an apphost) that starts the
	// runtime, which reads them the same way (dotnetRules).
	allPrograms: slices.Concat([]envRule{
		{name: "LD_PRELOAD", does: preloadLib},
		{name: "LD_AUDIT", does: preloadLib},
		{name: "DYLD_INSERT_LIBRARIES", does: preloadLib},
		{name: "GCONV_PATH", does: "names where %s's C library loads character-conversion modules (shared libraries) from"},
		{name: "OPENSSL_CONF", does: opensslLoads},
		{name: "OPENSSL_CONF_INCLUDE", does: "names where OpenSSL in %s reads its configuration's included files from, which can load shared libraries"},
		{name: "OPENSSL_MODULES", does: "names where OpenSSL in %s loads providers (shared libraries) from"},
		{name: "OPENSSL_ENGINES", does: "names where OpenSSL in %s loads engines (shared libraries) from"},
	}, dotnetRules),
	// The launcher's and the JVM's option variables, read like java's
	// options.
	"java": {
		{name: "JDK_JAVA_OPTIONS", opts: eachWord(javaOptRefusal)},
		{name: "JAVA_TOOL_OPTIONS", opts: eachWord(javaOptRefusal)},
		{name: "_JAVA_OPTIONS", opts: eachWord(javaOptRefusal)},
	},
	"lua": {
		{name: "LUA_INIT", does: "is code (or @FILE) %s runs before the script"},
		{name: "LUA_INIT_5_*", does: "is code (or @FILE) %s runs before the script"},
	},
	// Sourced at R's start, or files of variables that may name them.
	"rscript": {
		// Rscript runs $RHOME/bin/R: any executable.
		{name: "RHOME", does: "names the R installation whose bin/R %s runs, an executable clawd does not pin"},
		{name: "R_PROFILE", does: startupFile},
		{name: "R_PROFILE_USER", does: startupFile},
		{name: "R_ENVIRON"},
		{name: "R_ENVIRON_USER"},
		// R's own profile sources R_TESTS at every start (--vanilla
		// too), and loads the packages R_DEFAULT_PACKAGES names, from
		// the library path, before the script ("NULL" loads none). R's
		// start script sources etc$R_ARCH/ldpaths and runs
		// bin/exec$R_ARCH/R under R's home, R_ARCH a path that may climb
		// out of it.
		{name: "R_TESTS", does: "names a file R sources when %s starts"},
		{name: "R_DEFAULT_PACKAGES", off: []string{"NULL"}, does: "names packages R loads when %s starts, before the script"},
		{name: "R_ARCH", does: "names where R's start script, which %s runs, sources a shell file and finds the R it runs"},
	},
	"node": {
		{name: "NODE_OPTIONS", opts: eachWord(nodeOptRefusal)},
		{name: "NODE_COMPILE_CACHE", does: codeCache},
	},
	// npx is npm's: its settings, from npm_config_* variables or from the
	// .npmrc files they, HOME or the global prefix (PREFIX, DESTDIR on
	// unix) lead it to, can make it run other code. node-options becomes
	// NODE_OPTIONS for the package npx runs (read as NODE_OPTIONS is);
	// script-shell runs the package's command; package installs other
	// packages first, running their install scripts. The registry and the
	// cache pass: the package must already be where clawd read its
	// integrity (launch_npm.go).
	"npx": {
		{name: "node-options", npm: true, opts: eachWord(nodeOptRefusal)},
		{name: "script-shell", npm: true, does: "names the shell %s runs the package's command with"},
		{name: "userconfig", npm: true, does: npmrc},
		{name: "globalconfig", npm: true, does: npmrc},
		{name: "prefix", npm: true, does: npmPrefix},
		{name: "package", npm: true, does: "makes %s install other packages, whose install scripts run, before the command"},
		{name: "PREFIX", does: npmPrefix},
		{name: "DESTDIR", does: npmPrefix},
		{name: "HOME", does: npmHome},
		{name: "USERPROFILE", does: npmHome},
	},
	"python": {
		// Any value, "0" too: python checks it again when the script
		// ends and then reads its stdin, where clawd writes requests, as
		// code.
		{name: "PYTHONINSPECT", does: "makes %s read its stdin (clawd's requests) as code once the script ends"},
		{name: "PYTHONPYCACHEPREFIX", does: codeCache},
		{name: "PYTHONWARNINGS", opts: eachWord(pythonWarningRefusal)},
		// Where python finds its standard library and its site
		// directories, whose .pth files (their import lines) and
		// sitecustomize and usercustomize modules it runs at every start:
		// its home, the lib directory name (an absolute one replaces the
		// home's), the executable it is told it is (whose pyvenv.cfg makes
		// that directory its venv), the user's site directory
		// (PYTHONUSERBASE, else ~/.local, %APPDATA%\Python on Windows),
		// unless PYTHONNOUSERSITE turns user site directories off.
		// PYTHONPATH is a search path (a limit); PYTHONSTARTUP is read by
		// the interactive interpreter only.
		{name: "PYTHONHOME", does: pythonSite},
		{name: "PYTHONPLATLIBDIR", does: pythonSite},
		{name: "PYTHONEXECUTABLE", does: pythonVenv},
		{name: "__PYVENV_LAUNCHER__", does: pythonVenv},
		{name: "PYTHONUSERBASE", does: pythonUserSite, unless: "PYTHONNOUSERSITE"},
		{name: "HOME", does: pythonUserSite, unless: "PYTHONNOUSERSITE"},
		{name: "APPDATA", does: pythonUserSite, unless: "PYTHONNOUSERSITE"},
	},
	"perl": {
		{name: "PERL5OPT", opts: eachWord(perlOptRefusal)},
		{name: "PERL5DB", does: "is code %s's debugger runs"},
	},
	"ruby": {
		{name: "RUBYOPT", opts: rubyOptRefusal},
		// RubyGems, loaded at every start, requires BUNDLER_SETUP (the
		// RubyGems of Ruby 3.2 and later); the executables gems install
		// call Gem.use_gemdeps, which loads the Gemfile (Ruby code)
		// RUBYGEMS_GEMDEPS names, or finds one above the working
		// directory for "-"; a crash report template starting with "|"
		// is a command ruby (3.3 and later) runs when it crashes.
		{name: "BUNDLER_SETUP", does: "names a file RubyGems requires when %s starts"},
		{name: "RUBYGEMS_GEMDEPS", does: "makes RubyGems in %s load a Gemfile, which is Ruby code"},
		{name: "RUBY_CRASH_REPORT", does: "names where %s writes a crash report, or (|COMMAND) a command it runs when it crashes"},
	},
	// An ini file can auto_prepend_file (or append) any script.
	"php": {
		{name: "PHPRC", does: "names an ini file, which can make %s run another script first (auto_prepend_file)"},
		{name: "PHP_INI_SCAN_DIR", does: "names ini files, which can make %s run another script first (auto_prepend_file)"},
		// Xdebug, when the system's php.ini loads it, reads its settings
		// from XDEBUG_CONFIG and XDEBUG_MODE, and takes XDEBUG_SESSION or
		// XDEBUG_TRIGGER as the trigger to start debugging: its debugger
		// connects to a client and runs the code that client sends (the
		// same reason -d xdebug.* is refused).
		{name: "XDEBUG_*", off: []string{"off"}, does: "configures or triggers Xdebug in %s, whose debugger runs the code the client it connects to sends"},
	},
	"deno": {
		// Compiled code and the remote modules a script imports.
		{name: "DENO_DIR", does: codeCache},
		{name: "DENO_TSC_BIN", does: "names a program %s runs to type-check"},
	},
	"bun": {
		{name: "BUN_OPTIONS", opts: eachWord(bunOptRefusal)},
		// Bun is being taught to apply the NODE_OPTIONS flags it
		// implements, --require and --import among them.
		{name: "NODE_OPTIONS", opts: eachWord(nodeOptRefusal)},
		{name: "BUN_RUNTIME_TRANSPILER_CACHE_PATH", off: []string{"0"}, does: codeCache},
		// The inspector its editor integrations start: BUN_INSPECT listens
		// (for a debugger that can run code in it), BUN_INSPECT_CONNECT_TO
		// dials out to one, BUN_INSPECT_PRELOAD preloads a module.
		{name: "BUN_INSPECT*", does: "starts %s's debugger (or preloads a module), through which code clawd cannot pin runs in the server"},
	},
	// The shells, by what each reads for a script (not interactive; clawd
	// refuses -i): bash BASH_ENV; sh and ash (and ksh88) ENV in some
	// versions; zsh .zshenv in ZDOTDIR (else HOME); fish its config and
	// conf.d files under XDG_CONFIG_HOME (else HOME) and vendor_conf.d
	// under the XDG data directories; csh and tcsh ~/.cshrc (~/.tcshrc).
	// sh may be bash. PS4 is expanded for every traced command, its
	// command substitutions run by bash and ksh. bash's exported functions
	// need no rule: bash imports them only from variables named
	// BASH_FUNC_name%% (BASH_FUNC_name() in some vendors' bash), and the
	// names in a server's env are identifiers (ServerConfig.Validate, like
	// the store).
	"bash": {bashEnv, ps4},
	"sh":   {bashEnv, shEnv, ps4},
	"ash":  {shEnv, ps4},
	"ksh":  {shEnv, ps4},
	"dash": {ps4},
	"mksh": {ps4},
	"yash": {ps4},
	"zsh":  {{name: "ZDOTDIR", does: startupFile}, {name: "HOME", does: startupFile}, ps4},
	"fish": {
		{name: "XDG_CONFIG_HOME", does: startupFile}, {name: "XDG_DATA_HOME", does: startupFile},
		{name: "XDG_DATA_DIRS", does: startupFile}, {name: "HOME", does: startupFile},
	},
	"csh":  {{name: "HOME", does: startupFile}},
	"tcsh": {{name: "HOME", does: startupFile}},
}

// dotnetRules are .NET's variables that load code, in every program
// (allPrograms). The host (dotnet, an apphost) reads its own by their
// exact name: startup hooks, more .deps.json files and package stores
// (assemblies from elsewhere), the runtime's installation (an apphost's),
// and where a single-file app extracts its files (reused as they are at
// the next start). The runtime reads its knobs as DOTNET_NAME, then
// COMPlus_NAME (clrKnob): a garbage collector loaded from a native library
// (by path, or by name, which before .NET 9 may be a path relative to the
// runtime's directory) and diagnostic ports a client can load code
// through; its profilers by their own names. All of these in their exact
// case on Linux and macOS, where the host's getenv and the runtime's copy
// of the environment compare bytes (dotnet_startup_hooks is not read), in
// any case on Windows (envNameMatches). .NET Framework (Windows) has its
// own profiler and AppDomainManager variables.
var dotnetRules = slices.Concat([]envRule{
	{name: "DOTNET_STARTUP_HOOKS", does: "names assemblies whose startup hooks .NET runs in %s before its Main"},
	{name: "DOTNET_ADDITIONAL_DEPS", does: "names .deps.json files whose assemblies .NET loads into %s"},
	{name: "DOTNET_SHARED_STORE", does: "names package stores .NET loads %s's assemblies from"},
	{name: "DOTNET_ROOT*", does: "names the .NET installation whose runtime %s loads when it is a .NET app"},
	{name: "DOTNET_BUNDLE_EXTRACT_BASE_DIR", does: "names where %s, a single-file .NET app, extracts its files, which it runs as they are at its next start"},
	{name: "CORECLR_ENABLE_PROFILING", off: []string{"0"}, does: "makes .NET load the profiler CORECLR_PROFILER_PATH names into %s"},
	{name: "CORECLR_ENABLE_NOTIFICATION_PROFILERS", off: []string{"0"}, does: "makes .NET load the profilers CORECLR_NOTIFICATION_PROFILERS names into %s"},
	{name: "COR_ENABLE_PROFILING", off: []string{"0"}, does: "makes .NET Framework load the profiler COR_PROFILER names into %s"},
	{name: "APPDOMAIN_MANAGER_ASM", does: "names an assembly .NET Framework loads into %s as its AppDomainManager"},
},
	clrKnob("GCPath", "names a native library .NET loads into %s as its garbage collector"),
	clrKnob("GCName", "names a native library .NET loads into %s as its garbage collector (before .NET 9, any path relative to the runtime's directory)"),
	clrKnob("DiagnosticPorts", "opens %s to a diagnostics client that can load code into it"),
)

// clrKnob is the rules for the .NET runtime's knob name, read as
// DOTNET_name, then COMPlus_name.
func clrKnob(name, does string) []envRule {
	return []envRule{{name: "DOTNET_" + name, does: does}, {name: "COMPlus_" + name, does: does}}
}

var (
	bashEnv = envRule{name: "BASH_ENV", does: startupFile}
	shEnv   = envRule{name: "ENV", does: startupFile}
	ps4     = envRule{name: "PS4", does: "is expanded (command substitutions included) by %s for every command it traces"}
)
