package upstream

// The option tables of the interpreters findScript reads (launch_script.go),
// and the checks of the values some of their options take.

import (
	"fmt"
	"slices"
	"strings"
)

// interpreterOpts are the option tables, per rule.
var interpreterOpts = map[string]optTable{
	"node": {
		// --inspect-port (--debug-port) only sets the port the inspector
		// uses once something activates it.
		withValue: []string{"--title", "-C", "--conditions", "--stack-size", "--max-old-space-size", "--inspect-port", "--debug-port", "--input-type"},
		// An env file or a config file may set NODE_OPTIONS (or
		// "nodeOptions") to --require or --import a module of its choice;
		// OpenSSL's configuration can load shared libraries; a snapshot
		// blob holds code; a policy can redirect modules; --watch runs
		// the file again when it changes, unchecked; --run runs a
		// package.json script; the test runner loads its setup module and
		// reporters. Also read in NODE_OPTIONS (launch_env.go).
		foreignCode: []string{"-e", "--eval", "-p", "--print", "-r", "--require", "--import", "--loader", "--experimental-loader", "-", "-i", "--interactive",
			"--env-file", "--env-file-if-exists", "--experimental-config-file", "--experimental-default-config-file",
			"--openssl-config", "--snapshot-blob", "--experimental-policy", "--watch", "--watch-path", "--run",
			"--test-global-setup", "--test-reporter",
			"--inspect", "--inspect-brk", "--inspect-wait", "--inspect-brk-node"},
	},
	// python: -W's filter names a warning category by module (imported
	// before the script) and -X pycache_prefix a cache of compiled code:
	// pythonWarningRefusal, pythonXRefusal.
	"python": {
		withValue:   []string{"-W", "-X", "--check-hash-based-pycs"},
		foreignCode: []string{"-c", "-m", "-", "-i"},
		checkValue:  map[string]func(string) string{"-W": pythonWarningRefusal, "-X": pythonXRefusal},
	},
	// fish's -C/--init-command and --command run code given on the
	// command line (-C is bash's noclobber too, refused there as well:
	// rare, and refusing fails closed). zsh's -o shinstdin and -o
	// interactive (also spelled --shinstdin, any case, with _ or -) read
	// commands from stdin, where clawd writes requests: shellOptRefusal.
	"shell": {
		withValue:   []string{"-o", "+o", "-O", "+O", "--rcfile", "--init-file"},
		foreignCode: []string{"-c", "-s", "-", "-i", "-C", "--command", "--init-command", "--interactive"},
		checkValue:  map[string]func(string) string{"-o": shellOptRefusal},
	},
	// perlrun: -M/-m load a module before the script (-M-Foo too: "no
	// Foo" loads Foo), -d the debugger (PERL5DB) or a Devel:: module,
	// -F's pattern is put into the code perl runs, -S looks the script up
	// on PATH rather than where clawd pinned it. -x runs the pinned file
	// from its #!perl line; with a directory, perl changes to it after
	// opening the file. -n/-p/-a wrap the script's own code in a loop.
	"perl": {
		withValue:   []string{"-I"},
		restValue:   []string{"-C", "-D", "-i", "-x", "-V"},
		digitValue:  []string{"-0", "-l"},
		hexDigits:   true,
		foreignCode: []string{"-e", "-E", "-M", "-m", "-d", "-F", "-S"},
	},
	// ruby(1): -C/-X DIR and -xDIR change directory before the script is
	// read, so another file than the pinned one would run; -S looks it up
	// on PATH; -r requires a library first. -n/-p/-a wrap the script's own
	// code in a loop over its input.
	"ruby": {
		withValue:   []string{"-I", "-E", "--enable", "--disable", "--encoding", "--external-encoding", "--internal-encoding"},
		restValue:   []string{"-F", "-W", "-i"},
		digitValue:  []string{"-0"},
		foreignCode: []string{"-e", "-r", "-C", "-X", "-S", "--require"},
		checkValue:  map[string]func(string) string{"-x": rubyXRefusal, "-W": rubyWRefusal},
	},
	// php -h: -c/--php-ini reads another ini file (it can set
	// auto_prepend_file), -z loads a zend extension, -r/-B/-R/-F/-E run
	// code given on the command line (or a file per input line), -a is the
	// interactive shell, -S/-t the built-in web server, which runs any
	// file of its document root. -d's value is checked (phpIniRefusal).
	"php": {
		withValue:   []string{"-d", "--define", "--rf", "--rc", "--re", "--rz", "--ri"},
		scriptValue: []string{"-f", "--file"},
		foreignCode: []string{"-a", "--interactive", "-c", "--php-ini", "-z", "--zend-extension",
			"-r", "--run", "-B", "--process-begin", "-R", "--process-code", "-F", "--process-file",
			"-E", "--process-end", "-S", "--server", "-t", "--docroot"},
		checkValue: map[string]func(string) string{"-d": phpIniRefusal, "--define": phpIniRefusal},
	},
	"deno": {
		withValue: []string{"-c", "--config", "--import-map", "--lock", "--cert", "-L", "--log-level", "--location", "--seed", "--env-file"},
		// --preload (--import, --require) loads modules first; --watch
		// and --watch-hmr run the files again when they change, unchecked;
		// --inspect* open the debugger (their address only ever after "=").
		foreignCode: []string{"-", "--eval", "--preload", "--import", "--require", "--watch", "--watch-hmr", "--unstable-hmr",
			"--inspect", "--inspect-brk", "--inspect-wait"},
	},
	"bun": {
		withValue: []string{"--env-file", "--tsconfig-override"},
		// --require and --import are --preload; --hot and --watch reload
		// changed files, unchecked; a config file (bunfig.toml) can
		// preload modules; --cwd makes bun read FILE from another
		// directory than the one clawd pinned it in. Also read in
		// BUN_OPTIONS (launch_env.go).
		foreignCode: []string{"-e", "--eval", "-p", "--print", "-r", "--preload", "--require", "--import", "-",
			"--hot", "--watch", "-c", "--config", "--cwd",
			"--inspect", "--inspect-brk", "--inspect-wait"},
	},
	"lua": {
		// -l loads a module from the search path; luajit's -j loads a
		// JIT extension module and -b runs its bytecode saver.
		foreignCode: []string{"-e", "-l", "-i", "-", "-j", "-b"},
	},
}

// pythonWarningRefusal refuses a warnings filter (-W, or one of
// PYTHONWARNINGS's comma-separated ones: action:message:category:module:
// lineno) whose category is module-qualified: python imports that module
// to find the category, before the script runs.
func pythonWarningRefusal(filter string) string {
	for _, f := range strings.Split(filter, ",") {
		if parts := strings.Split(f, ":"); len(parts) >= 3 && strings.Contains(parts[2], ".") {
			return fmt.Sprintf("the warnings filter `%s` makes python import the module of its category (%s) before the script, code clawd cannot pin; name a built-in category", f, strings.TrimSpace(parts[2]))
		}
	}
	return ""
}

// pythonXRefusal refuses -X pycache_prefix: a cache of compiled code
// python runs in place of compiling the pinned files.
func pythonXRefusal(v string) string {
	if name, _, _ := strings.Cut(v, "="); strings.TrimSpace(name) == "pycache_prefix" {
		return fmt.Sprintf("`-X %s` names a cache of compiled code python runs in place of the files it compiles, which clawd does not check; drop it", v)
	}
	return ""
}

// rubyWRefusal checks the rest of a group after ruby's -W: ruby reads at
// most one digit (-W2) or a category (-W:no-deprecated) and then goes on
// reading options, so -WS would be -W -S (the script looked up on PATH).
// Anything after the digit is refused: give further options separately.
func rubyWRefusal(v string) string {
	if v == "" || v[0] == ':' {
		return ""
	}
	if v[0] >= '0' && v[0] <= '9' {
		v = v[1:]
	}
	if v != "" {
		return fmt.Sprintf("ruby reads `%s` after -W as more options, which clawd does not read there; give each option as an argument of its own", v)
	}
	return ""
}

// shellOptRefusal refuses the shell options (zsh's -o NAME or --NAME:
// case, "_" and "-" do not count) that make the shell read its commands
// from stdin, where clawd writes requests, or run interactively.
func shellOptRefusal(name string) string {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	if n == "shinstdin" || n == "interactive" {
		return fmt.Sprintf("the shell option `%s` makes the shell read commands from its input (clawd's requests), which clawd cannot pin; drop it", name)
	}
	return ""
}

// rubyXRefusal refuses ruby's -xDIR: ruby changes to DIR before it reads
// the script, so the file it runs is not the one clawd pinned.
func rubyXRefusal(dir string) string {
	if dir == "" {
		return ""
	}
	return fmt.Sprintf("`-x%s` makes ruby change to %s before it reads the script, so another file than the one clawd pins would run; drop the directory (plain -x), and set the server's working directory instead", dir, dir)
}

// phpCodeKeys are the ini settings that make php load or run code besides
// the script: a script run before or after it, an extension and the
// directory extensions are loaded from, a preload script or header, a
// cache of compiled code, and the command mail() runs.
var phpCodeKeys = []string{"auto_prepend_file", "auto_append_file", "extension", "zend_extension", "extension_dir",
	"opcache.preload", "opcache.file_cache", "ffi.preload", "sendmail_path"}

// phpIniRefusal says why php's -d KEY[=VALUE] makes php load code clawd
// cannot pin, or "". Settings that only tune (memory_limit,
// display_errors...) pass, and so does include_path, a search path like
// the other runtimes' (a documented limit).
func phpIniRefusal(v string) string {
	key, _, _ := strings.Cut(v, "=")
	key = strings.ToLower(strings.TrimSpace(key))
	if slices.Contains(phpCodeKeys, key) {
		return fmt.Sprintf("`-d %s` makes php load or run code besides the script, which clawd cannot pin; drop it (put what the server needs in the script)", strings.TrimSpace(v))
	}
	return ""
}
