package upstream

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// The variables of a server's configured env (what `clawd mcp add --env`
// or the API set) that make the program the command runs load or run code
// besides the file approval pins: a startup file or its directory, options
// that preload a module, code in the value itself, a cache of compiled
// code used in place of the source, or an interactive mode that reads
// clawd's requests as code. Such a variable is refused (Launch.Unpinned).
//
// Not checked: clawd's own environment, which every server inherits
// (whoever sets it can load code into clawd itself), and the module search
// paths (NODE_PATH, PYTHONPATH, PERL5LIB, RUBYLIB, LUA_PATH...), which
// servers need and which change what a module the program asks for
// resolves to; docs/upstreams.md lists them as limits.

// envRule is one variable, or with a trailing "*" every variable starting
// with the rest, that makes a program run code clawd cannot pin.
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
}

const (
	loadsCode   = "makes %s load code clawd cannot pin before or beside the file it pins"
	startupFile = "names a startup file (or its directory) that %s runs before the script"
	codeCache   = "names a cache of compiled code %s runs in place of the files it compiles, which clawd does not check"
	preloadLib  = "makes the dynamic loader load a library clawd cannot pin into %s before its own code"
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
	allPrograms: {
		{name: "LD_PRELOAD", does: preloadLib},
		{name: "LD_AUDIT", does: preloadLib},
		{name: "DYLD_INSERT_LIBRARIES", does: preloadLib},
		{name: "GCONV_PATH", does: "names where %s's C library loads character-conversion modules (shared libraries) from"},
	},
	// The launcher's and the JVM's option variables, read like java's
	// options.
	"java": {
		{name: "JDK_JAVA_OPTIONS", opts: eachWord(javaOptRefusal)},
		{name: "JAVA_TOOL_OPTIONS", opts: eachWord(javaOptRefusal)},
		{name: "_JAVA_OPTIONS", opts: eachWord(javaOptRefusal)},
	},
	"dotnet": {
		{name: "DOTNET_STARTUP_HOOKS"},
		{name: "DOTNET_ADDITIONAL_DEPS"},
		{name: "CORECLR_ENABLE_PROFILING", off: []string{"0"}},
		// A garbage collector loaded from a native library, and
		// diagnostic ports a debugger or profiler drives the runtime
		// through (it can load code).
		{name: "DOTNET_GCPath", does: "names a native library %s loads as its garbage collector"},
		{name: "DOTNET_DiagnosticPorts", does: "opens %s to a diagnostics client that can load code into it"},
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
	},
	"node": {
		{name: "NODE_OPTIONS", opts: eachWord(nodeOptRefusal)},
		{name: "NODE_COMPILE_CACHE", does: codeCache},
		// OpenSSL's configuration, which node loads at start, can load
		// providers and engines (shared libraries).
		{name: "OPENSSL_CONF"},
	},
	"python": {
		// Any value, "0" too: python checks it again when the script
		// ends and then reads its stdin, where clawd writes requests, as
		// code.
		{name: "PYTHONINSPECT", does: "makes %s read its stdin (clawd's requests) as code once the script ends"},
		{name: "PYTHONPYCACHEPREFIX", does: codeCache},
		{name: "PYTHONWARNINGS", opts: eachWord(pythonWarningRefusal)},
	},
	"perl": {
		{name: "PERL5OPT", opts: eachWord(perlOptRefusal)},
		{name: "PERL5DB", does: "is code %s's debugger runs"},
	},
	"ruby": {
		{name: "RUBYOPT", opts: rubyOptRefusal},
	},
	// An ini file can auto_prepend_file (or append) any script.
	"php": {
		{name: "PHPRC", does: "names an ini file, which can make %s run another script first (auto_prepend_file)"},
		{name: "PHP_INI_SCAN_DIR", does: "names ini files, which can make %s run another script first (auto_prepend_file)"},
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
	// refuses -i): bash BASH_ENV, and the functions it imports; sh and ash
	// (and ksh88) ENV in some versions; zsh .zshenv in ZDOTDIR (else HOME);
	// fish its config and conf.d files under XDG_CONFIG_HOME (else HOME)
	// and vendor_conf.d under the XDG data directories; csh and tcsh
	// ~/.cshrc (~/.tcshrc). sh may be bash. PS4 is expanded for every
	// traced command, its command substitutions run by bash and ksh.
	"bash": {bashEnv, bashFunc, ps4},
	"sh":   {bashEnv, bashFunc, shEnv, ps4},
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

var (
	bashEnv  = envRule{name: "BASH_ENV", does: startupFile}
	bashFunc = envRule{name: "BASH_FUNC_*", does: "defines a function %s runs in place of a command the script calls"}
	shEnv    = envRule{name: "ENV", does: startupFile}
	ps4      = envRule{name: "PS4", does: "is expanded (command substitutions included) by %s for every command it traces"}
)

// envRuleKeys are the envRules keys for a command of the given rule kind,
// named (configured command, resolved executable) names: npx runs node;
// a shell takes the rules of both names (`sh` may be bash, a link named
// otherwise may be zsh).
func envRuleKeys(kind string, names ...string) []string {
	switch kind {
	case "npx":
		return []string{"node"}
	case "shell":
		var keys []string
		for _, n := range names {
			if launcherKind(n) == kind && !slices.Contains(keys, n) {
				keys = append(keys, n)
			}
		}
		return keys
	}
	return []string{kind}
}

// envRefusal says why the server's env makes program name (of rule kind,
// "" for a plain executable; its configured and resolved names in names)
// run code clawd cannot pin, or "": the rules for every program, then
// those of its kind. Only env, the server's own variables, is read.
func envRefusal(kind, name string, env map[string]string, names ...string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, rk := range append([]string{allPrograms}, envRuleKeys(kind, names...)...) {
		for _, r := range envRules[rk] {
			for _, k := range keys {
				if v := env[k]; envNameMatches(k, r.name) {
					if why := r.refusal(k, v, name); why != "" {
						return why
					}
				}
			}
		}
	}
	return ""
}

func (r envRule) refusal(k, v, name string) string {
	if r.opts != nil {
		if why := r.opts(optionWords(v)); why != "" {
			return fmt.Sprintf("the server's env sets %s, whose option %s", k, why)
		}
		return ""
	}
	if v == "" || slices.Contains(r.off, v) {
		return ""
	}
	does := r.does
	if does == "" {
		does = loadsCode
	}
	return fmt.Sprintf("the server's env sets `%s`, which "+does+"; remove it from the env", k, name)
}

// envNameMatches reports whether variable k is the rule's name (or, for a
// name ending in "*", starts with the rest), in any case on Windows, as
// its environment is.
func envNameMatches(k, name string) bool {
	if runtime.GOOS == "windows" {
		k, name = strings.ToUpper(k), strings.ToUpper(name)
	}
	if prefix, ok := strings.CutSuffix(name, "*"); ok {
		return strings.HasPrefix(k, prefix)
	}
	return k == name
}

// optionWords splits an option variable's value into words the way the
// runtimes do, erring towards finding an option: blanks separate words,
// and quotes (single or double) and backslashes are dropped, as they are
// when they group or escape (node reads "--re\quire" as --require, the
// JVM -java""agent:x as -javaagent:x). A quoted value with blanks becomes
// several words, each of them checked.
func optionWords(v string) []string {
	return strings.Fields(strings.NewReplacer(`"`, "", `'`, "", `\`, "").Replace(v))
}

// eachWord checks the words one by one with check.
func eachWord(check func(string) string) func([]string) string {
	return func(words []string) string {
		for _, w := range words {
			if why := check(w); why != "" {
				return why
			}
		}
		return ""
	}
}

// The option variables' readers: each reads its words with the runtime's
// table, as options only (optionsRefusal), so the command line and the
// variable refuse the same options; an option the table does not know is
// refused there too.

// nodeOptRefusal says why node option word w (as NODE_OPTIONS has it)
// loads or runs code clawd cannot pin, or "". node takes no value that
// starts with "-", so each word is read on its own.
func nodeOptRefusal(w string) string { return optionsRefusal("node", []string{w}) }

// nodeSpelling is node argument a as node reads it: underscores in a long
// option's name are dashes (--experimental_loader=x is
// --experimental-loader=x). Anything else is returned as it is.
func nodeSpelling(a string) string {
	rest, ok := strings.CutPrefix(a, "--")
	if !ok || rest == "" {
		return a
	}
	name, value, hasValue := strings.Cut(rest, "=")
	a = "--" + strings.ReplaceAll(name, "_", "-")
	if hasValue {
		a += "=" + value
	}
	return a
}

// bunOptRefusal is nodeOptRefusal for bun's options (BUN_OPTIONS).
func bunOptRefusal(w string) string { return optionsRefusal("bun", []string{w}) }

// perlOptRefusal says why PERL5OPT word w loads code, or "". perl reads
// each word on its own (its leading "-" optional; -I takes the rest of the
// word), and of the switches it allows there, -M and -m load a module and
// -d the debugger (or a Devel:: module).
func perlOptRefusal(w string) string { return optionsRefusal("perl", []string{w}) }

// rubyOptRefusal says why RUBYOPT's words load code, or "": -r requires a
// library before the script, --crash-report=|CMD runs a command. ruby
// reads each word (its leading "-" optional) as a group of switches, and
// -I and -E take the rest of the word, or the next word.
func rubyOptRefusal(words []string) string { return optionsRefusal("ruby", words) }

// javaOptRefusal says why a word of the JVM's option variables
// (JDK_JAVA_OPTIONS, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS) loads code, or "":
// java's options, one word each.
func javaOptRefusal(w string) string { return optionsRefusal("java", []string{w}) }
