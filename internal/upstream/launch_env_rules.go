package upstream

import (
	"slices"
	"strings"
)

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
// A runtime's own variables are refused whatever the command
// (everyProgram), not only when clawd recognises the runtime by the
// command's name or a #! line: a plain executable may start it and pass
// them on (a wrapper compiled or named otherwise that execs java -jar, a
// node single-executable app or a pkg binary, a jpackage or launch4j
// launcher, a PyInstaller binary, a program that runs python or bash).
// What is read with the runtime's option table (NODE_OPTIONS, the JVM's
// option variables...) is read so for every command, so what only tunes
// the runtime (NODE_OPTIONS=--max-old-space-size=4096,
// JAVA_TOOL_OPTIONS=-Xmx1g) passes whatever runs. Only variables with a
// broad meaning of their own, which servers set for other reasons (HOME,
// APPDATA, USERPROFILE, the XDG directories, ENV, PREFIX, DESTDIR), are
// refused only for the programs clawd recognises that read them as code
// (envRules): a plain executable that starts python or fish with them is a
// limit.
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
	// the program (loadsCode when empty): its name, or when the command is
	// not one of progs, "reader, if COMMAND starts it,".
	does string
	// npm says name is an npm setting (node-options), matched the way npm
	// reads npm_config_* variables (see npmSetting).
	npm bool
	// unless is a flag variable of python's that, set on in the server's
	// env (flagOn), turns the rule off; the refusal names it as the other
	// fix. With unlessOff, any value of it turns the rule off, and the
	// refusal suggests unlessOff (bun's cache path, "0" for none).
	unless    string
	unlessOff string
	// reader names the runtime that reads the variable, in a rule of
	// everyProgram's that only it reads; progs are the envRules keys
	// (envRuleKeys) of the commands clawd recognises as it, for which the
	// refusal names the command itself. Set by readBy.
	reader string
	progs  []string
}

const (
	loadsCode      = "makes %s load code clawd cannot pin before or beside the file it pins"
	startupFile    = "names a startup file (or its directory) that %s runs before the script"
	codeCache      = "names a cache of compiled code %s runs in place of the files it compiles, which clawd does not check"
	preloadLib     = "makes the dynamic loader load a library clawd cannot pin into %s before its own code"
	opensslLoads   = "names the OpenSSL configuration %s reads when it uses OpenSSL, which can load shared libraries (providers, engines)"
	pythonSite     = "moves where %s finds its standard library and site directories, whose .pth files and sitecustomize it runs at every start"
	pythonVenv     = "names the executable %s takes itself for, whose directory's pyvenv.cfg makes it a venv whose .pth files and sitecustomize it runs at every start"
	pythonUserSite = "moves where %s finds its user site directory, whose .pth files and usercustomize it runs at every start"
	rStartupFile   = "names a file %s sources at its start, before the script"
	npmrc          = "names an npm configuration file, whose settings (node-options, script-shell) can make %s run other code"
	npmPrefix      = "moves npm's global prefix, whose etc/npmrc settings (node-options, script-shell) can make %s run other code, and whose packages it may run"
	npmHome        = "names the home directory whose .npmrc settings (node-options, script-shell) can make %s run other code"
)

// readBy is rules marked as read only by the runtime named reader, which
// clawd recognises in a program whose envRules keys include one of progs
// (envRule.reader, envRule.progs).
func readBy(reader string, progs []string, rules ...envRule) []envRule {
	out := make([]envRule, len(rules))
	for i, r := range rules {
		r.reader, r.progs = reader, progs
		out[i] = r
	}
	return out
}

// The shells clawd recognises that expand PS4 when they trace.
var ps4Shells = []string{"bash", "sh", "ash", "ksh", "dash", "mksh", "yash", "zsh"}

// everyProgram are the rules for every stdio server's command, whatever
// clawd recognises it as.
var everyProgram = slices.Concat(
	// Libraries the dynamic loader loads into any program before its own
	// code runs (glibc's LD_PRELOAD and LD_AUDIT, macOS's
	// DYLD_INSERT_LIBRARIES), and glibc's character-conversion modules,
	// shared libraries iconv loads from GCONV_PATH. The loaders' search
	// paths (LD_LIBRARY_PATH, DYLD_LIBRARY_PATH...) only change where a
	// library the program asks for is found: a limit, like the runtimes'
	// module paths.
	//
	// And OpenSSL's: any program that initializes OpenSSL reads its
	// configuration (python's ssl and hashlib, node, curl, ssh...), which
	// can load providers and engines, shared libraries, from a path it
	// names or by name from OPENSSL_MODULES and OPENSSL_ENGINES (where a
	// provider or engine the program itself loads by name comes from
	// too); OPENSSL_CONF_INCLUDE is where a configuration's relative
	// .include files are read from.
	[]envRule{
		{name: "LD_PRELOAD", does: preloadLib},
		{name: "LD_AUDIT", does: preloadLib},
		{name: "DYLD_INSERT_LIBRARIES", does: preloadLib},
		{name: "GCONV_PATH", does: "names where %s's C library loads character-conversion modules (shared libraries) from"},
		{name: "OPENSSL_CONF", does: opensslLoads},
		{name: "OPENSSL_CONF_INCLUDE", does: "names where OpenSSL in %s reads its configuration's included files from, which can load shared libraries"},
		{name: "OPENSSL_MODULES", does: "names where OpenSSL in %s loads providers (shared libraries) from"},
		{name: "OPENSSL_ENGINES", does: "names where OpenSSL in %s loads engines (shared libraries) from"},
	},
	// .NET's, phrased for any program: a published .NET app is an
	// executable of its own (an apphost) that starts the runtime.
	dotnetRules,
	// node's option variable, read like node's options (bun, which reads
	// it too, is being taught the flags it implements, --require and
	// --import among them), and its cache of compiled code.
	readBy("node", []string{"node", "bun"},
		envRule{name: "NODE_OPTIONS", opts: eachWord(nodeOptRefusal)}),
	readBy("node", []string{"node"},
		envRule{name: "NODE_COMPILE_CACHE", does: codeCache}),
	// npm's settings, from npm_config_* variables (npx, and any program
	// that runs npm or npx): node-options becomes NODE_OPTIONS for the
	// package npx runs (read as NODE_OPTIONS is); script-shell runs the
	// package's command; package installs other packages first, running
	// their install scripts; the others lead npm to .npmrc files that may
	// set those. The registry and the cache pass: the package must already
	// be where clawd read its integrity (launch_npm.go). What else leads
	// npm to an .npmrc (HOME, PREFIX...) has a broad meaning: npx only.
	readBy("npm", []string{"npx"},
		envRule{name: "node-options", npm: true, opts: eachWord(nodeOptRefusal)},
		envRule{name: "script-shell", npm: true, does: "names the shell %s runs the package's command with"},
		envRule{name: "userconfig", npm: true, does: npmrc},
		envRule{name: "globalconfig", npm: true, does: npmrc},
		envRule{name: "prefix", npm: true, does: npmPrefix},
		envRule{name: "package", npm: true, does: "makes %s install other packages, whose install scripts run, before the command"},
	),
	// The launcher's and the JVM's option variables, read like java's
	// options: the JVM reads JAVA_TOOL_OPTIONS and _JAVA_OPTIONS wherever
	// it is started (a jpackage or launch4j launcher too).
	readBy("java", []string{"java"},
		envRule{name: "JDK_JAVA_OPTIONS", opts: eachWord(javaOptRefusal)},
		envRule{name: "JAVA_TOOL_OPTIONS", opts: eachWord(javaOptRefusal)},
		envRule{name: "_JAVA_OPTIONS", opts: eachWord(javaOptRefusal)},
	),
	pythonRules,
	readBy("perl", []string{"perl"},
		envRule{name: "PERL5OPT", opts: eachWord(perlOptRefusal)},
		envRule{name: "PERL5DB", does: "is code %s runs in its debugger"},
	),
	// RubyGems, loaded at every start, requires BUNDLER_SETUP (the
	// RubyGems of Ruby 3.2 and later); the executables gems install call
	// Gem.use_gemdeps, which loads the Gemfile (Ruby code)
	// RUBYGEMS_GEMDEPS names, or finds one above the working directory for
	// "-"; a crash report template starting with "|" is a command ruby
	// (3.3 and later) runs when it crashes.
	readBy("ruby", []string{"ruby"},
		envRule{name: "RUBYOPT", opts: rubyOptRefusal},
		envRule{name: "BUNDLER_SETUP", does: "names a file %s requires at its start (RubyGems does)"},
		envRule{name: "RUBYGEMS_GEMDEPS", does: "makes %s load a Gemfile, which is Ruby code (RubyGems does)"},
		envRule{name: "RUBY_CRASH_REPORT", does: "names where %s writes a crash report, or (|COMMAND) a command it runs when it crashes"},
	),
	// An ini file can auto_prepend_file (or append) any script. Xdebug,
	// when the system's php.ini loads it, reads its settings from
	// XDEBUG_CONFIG and XDEBUG_MODE, and takes XDEBUG_SESSION or
	// XDEBUG_TRIGGER as the trigger to start debugging: its debugger
	// connects to a client and runs the code that client sends (the same
	// reason -d xdebug.* is refused).
	readBy("php", []string{"php"},
		envRule{name: "PHPRC", does: "names an ini file, which can make %s run another script first (auto_prepend_file)"},
		envRule{name: "PHP_INI_SCAN_DIR", does: "names ini files, which can make %s run another script first (auto_prepend_file)"},
		envRule{name: "XDEBUG_*", off: []string{"off"}, does: "makes %s configure or trigger Xdebug (when its ini loads it), whose debugger runs the code the client it connects to sends"},
	),
	readBy("lua", []string{"lua"},
		envRule{name: "LUA_INIT", does: "is code (or @FILE) %s runs before the script"},
		envRule{name: "LUA_INIT_5_*", does: "is code (or @FILE) %s runs before the script"},
	),
	rRules,
	// deno's cache: compiled code and the remote modules a script
	// imports; and the type-checker it runs.
	readBy("deno", []string{"deno"},
		envRule{name: "DENO_DIR", does: codeCache},
		envRule{name: "DENO_TSC_BIN", does: "names a program %s runs to type-check"},
	),
	// bun's option variable, its transpiler cache, and the inspector its
	// editor integrations start: BUN_INSPECT listens (for a debugger that
	// can run code in it), BUN_INSPECT_CONNECT_TO dials out to one,
	// BUN_INSPECT_PRELOAD preloads a module.
	readBy("bun", []string{"bun"},
		envRule{name: "BUN_OPTIONS", opts: eachWord(bunOptRefusal)},
		envRule{name: "BUN_RUNTIME_TRANSPILER_CACHE_PATH", off: []string{"0"}, does: codeCache},
		envRule{name: "BUN_INSPECT*", does: "makes %s start its debugger, through which code clawd cannot pin runs in the server, or preload a module"},
	),
	// The shells' own: bash's startup file for scripts and its shopt
	// options (BASHOPTS), zsh's startup
	// directory (.zshenv, read by every zsh), and the trace prompt, which
	// the shells expand for every command they trace (bash and ksh run its
	// command substitutions), and SHELLOPTS=xtrace in the same env turns
	// tracing on in any bash. Only shells read them; sh may be bash.
	readBy("bash", []string{"bash", "sh"}, envRule{name: "BASH_ENV", does: startupFile},
		// bash sets the shopt options BASHOPTS lists before it reads
		// anything: extdebug runs the debugger's profile, like -O extdebug.
		envRule{name: "BASHOPTS", opts: bashoptsRefusal}),
	readBy("zsh", []string{"zsh"}, envRule{name: "ZDOTDIR", does: startupFile}),
	readBy("bash or ksh", ps4Shells,
		envRule{name: "PS4", does: "is expanded (command substitutions included) by %s for every command it traces"}),
)

// pythonRules are python's, for every program (everyProgram).
var pythonRules = readBy("python", []string{"python"},
	// Any value, "0" too: python checks it again when the script ends and
	// then reads its stdin, where clawd writes requests, as code.
	envRule{name: "PYTHONINSPECT", does: "makes %s read its stdin as code once the script ends (the server's stdin carries clawd's requests)"},
	envRule{name: "PYTHONPYCACHEPREFIX", does: codeCache},
	// A debug build (3.13 and later) imports this module before site.
	envRule{name: "PYTHON_PRESITE", does: "names a module %s imports at its start, before the script"},
	envRule{name: "PYTHONWARNINGS", opts: eachWord(pythonWarningRefusal)},
	// Where python finds its standard library and its site directories,
	// whose .pth files (their import lines) and sitecustomize and
	// usercustomize modules it runs at every start: its home, the lib
	// directory name (an absolute one replaces the home's), the executable
	// it is told it is (whose pyvenv.cfg makes that directory its venv),
	// the user's site directory (PYTHONUSERBASE, else ~/.local,
	// %APPDATA%\Python on Windows: HOME and APPDATA, python's only in
	// envRules), unless PYTHONNOUSERSITE turns user site directories off,
	// which it does in any python the command starts with this env.
	// PYTHONPATH is a search path (a limit); PYTHONSTARTUP is read by the
	// interactive interpreter only.
	envRule{name: "PYTHONHOME", does: pythonSite},
	envRule{name: "PYTHONPLATLIBDIR", does: pythonSite},
	envRule{name: "PYTHONEXECUTABLE", does: pythonVenv},
	envRule{name: "__PYVENV_LAUNCHER__", does: pythonVenv},
	envRule{name: "PYTHONUSERBASE", does: pythonUserSite, unless: "PYTHONNOUSERSITE"},
)

// rRules are R's, for every program (everyProgram): sourced at R's start,
// or files of variables that may name them.
var rRules = readBy("R", []string{"rscript"},
	// Rscript runs $RHOME/bin/R: any executable.
	envRule{name: "RHOME", does: "names the R installation whose bin/R %s runs, an executable clawd does not pin"},
	envRule{name: "R_PROFILE", does: rStartupFile},
	envRule{name: "R_PROFILE_USER", does: rStartupFile},
	envRule{name: "R_ENVIRON"},
	envRule{name: "R_ENVIRON_USER"},
	// R's own profile sources R_TESTS at every start (--vanilla too), and
	// loads the packages R_DEFAULT_PACKAGES names, from the library path,
	// before the script ("NULL" loads none). R's start script sources
	// etc$R_ARCH/ldpaths and runs bin/exec$R_ARCH/R under R's home, R_ARCH
	// a path that may climb out of it.
	envRule{name: "R_TESTS", does: rStartupFile},
	envRule{name: "R_DEFAULT_PACKAGES", off: []string{"NULL"}, does: "names packages %s loads at its start, before the script"},
	envRule{name: "R_ARCH", does: "names where the start script of %s sources a shell file and finds the R binary it runs"},
)

// envRules are the rules only the programs clawd recognises get: variables
// with a broad meaning of their own, which servers set for other reasons,
// and which these programs read as code. By rule kind for most runtimes,
// by program name for the shells, whose rules differ (see envRuleKeys).
var envRules = map[string][]envRule{
	// npx is npm: HOME or the global prefix (PREFIX, DESTDIR on unix) lead
	// it to .npmrc files, whose settings can make it run other code.
	"npx": {
		{name: "PREFIX", does: npmPrefix},
		{name: "DESTDIR", does: npmPrefix},
		{name: "HOME", does: npmHome},
		{name: "USERPROFILE", does: npmHome},
	},
	// python's user site directory under HOME (~/.local) and APPDATA
	// (Windows), unless PYTHONNOUSERSITE turns it off (pythonRules).
	"python": {
		{name: "HOME", does: pythonUserSite, unless: "PYTHONNOUSERSITE"},
		{name: "APPDATA", does: pythonUserSite, unless: "PYTHONNOUSERSITE"},
	},
	// The shells, by what each reads for a script (not interactive; clawd
	// refuses -i), besides BASH_ENV, ZDOTDIR and PS4 (everyProgram): sh
	// and ash (and ksh88) ENV in some versions, a name applications use
	// for their own setting (ENV=production); zsh .zshenv in HOME without
	// ZDOTDIR; fish its config and conf.d files under XDG_CONFIG_HOME
	// (else HOME) and vendor_conf.d under the XDG data directories; csh
	// and tcsh ~/.cshrc (~/.tcshrc). bash's exported functions need no
	// rule: bash imports them only from variables named BASH_FUNC_name%%
	// (BASH_FUNC_name() in some vendors' bash), and the names in a
	// server's env are identifiers (ServerConfig.Validate, like the
	// store).
	"sh":  {shEnv},
	"ash": {shEnv},
	"ksh": {shEnv},
	"zsh": {{name: "HOME", does: startupFile}},
	"fish": {
		{name: "XDG_CONFIG_HOME", does: startupFile}, {name: "XDG_DATA_HOME", does: startupFile},
		{name: "XDG_DATA_DIRS", does: startupFile}, {name: "HOME", does: startupFile},
	},
	"csh":  {{name: "HOME", does: startupFile}},
	"tcsh": {{name: "HOME", does: startupFile}},
	// The caches of compiled code (and deno's remote modules) of deno and
	// bun, when DENO_DIR and BUN_RUNTIME_TRANSPILER_CACHE_PATH (refused
	// for every program) are not set: deno's under XDG_CACHE_HOME, else
	// HOME (~/.cache/deno); bun's under XDG_CACHE_HOME, else HOME
	// (USERPROFILE on Windows: ~/.bun/install/cache), unless the server's
	// env turns it off (BUN_RUNTIME_TRANSPILER_CACHE_PATH=0). Both run a
	// cached copy whose recorded hash matches the source.
	"deno": {{name: "XDG_CACHE_HOME", does: codeCache}, {name: "HOME", does: codeCache}},
	"bun": {
		{name: "XDG_CACHE_HOME", does: codeCache, unless: "BUN_RUNTIME_TRANSPILER_CACHE_PATH", unlessOff: "0"},
		{name: "HOME", does: codeCache, unless: "BUN_RUNTIME_TRANSPILER_CACHE_PATH", unlessOff: "0"},
		{name: "USERPROFILE", does: codeCache, unless: "BUN_RUNTIME_TRANSPILER_CACHE_PATH", unlessOff: "0"},
	},
	// R sources ~/.Rprofile and reads ~/.Renviron (which may name more
	// startup files) at every start when the working directory has none,
	// like R_PROFILE_USER and R_ENVIRON_USER; R_USER is the home of R on
	// Windows.
	"rscript": {{name: "HOME", does: rStartupFile}, {name: "R_USER", does: rStartupFile}},
}

// dotnetRules are .NET's variables that load code, in every program
// (everyProgram). The host (dotnet, an apphost) reads its own by their
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

// shEnv is ENV, the startup file some versions of sh read for a script.
var shEnv = envRule{name: "ENV", does: startupFile}

// bashoptsRefusal refuses BASHOPTS (shopt options, split at ":", read as
// one word here since it holds no blanks) that turns extdebug on.
func bashoptsRefusal(words []string) string {
	for _, w := range words {
		for _, o := range strings.Split(w, ":") {
			if bashShoptRefusal(o) != "" {
				return "extdebug makes bash run its debugger's profile before the script, code clawd cannot pin; remove it"
			}
		}
	}
	return ""
}
