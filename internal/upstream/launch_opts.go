package upstream

// The option tables of the script interpreters (read by launch_script.go),
// and the checks of the values some of their options take. Each lists the
// options of the versions named in its comment, as their --help, man page
// or option parser has them; an option missing from a table is refused
// with a message that names it (give a value after "=", or drop it).

import (
	"fmt"
	"slices"
	"strings"
)

// interpreterOpts are the option tables, per rule (the shells' are in
// shellOpts, by program name).
var interpreterOpts = map[string]*optTable{
	"node":    nodeOpts,
	"python":  pythonOpts,
	"perl":    perlOpts,
	"ruby":    rubyOpts,
	"php":     phpOpts,
	"deno":    denoOpts,
	"bun":     bunOpts,
	"lua":     luaOpts,
	"java":    javaOpts,
	"dotnet":  dotnetOpts,
	"rscript": rscriptOpts,
}

// nodeOpts: `node --help` of node 20, with the options node 22 and 24
// document; node reads "--name=value" for every option, hands the options
// it does not know to V8, and takes no separate value that starts with
// "-". V8's options given to node take their value only after "=" (node
// hands V8 `--stack-size` alone and exits): `--stack-size=N` passes as any
// --name=value does, `--stack-size N` is refused. The flags of V8's that
// node documents (those NODE_OPTIONS allows) and a few common ones are
// listed; --no-NAME negates any boolean.
var nodeOpts = &optTable{
	name:   "node",
	groups: wholeWord,
	flags: []string{"-c", "--check", "-h", "--help", "-v", "--version", "--v8-options", "--completion-bash",
		"--abort-on-uncaught-exception", "--allow-addons", "--allow-child-process", "--allow-wasi", "--allow-worker",
		"--permission", "--experimental-permission", "--build-snapshot", "--cpu-prof", "--heap-prof", "--prof", "--prof-process",
		"--disable-wasm-trap-handler", "--disallow-code-generation-from-strings", "--disable-sigusr1",
		"--enable-etw-stack-walking", "--enable-fips", "--force-fips", "--enable-source-maps",
		"--experimental-eventsource", "--experimental-import-meta-resolve", "--experimental-network-imports",
		"--experimental-network-inspection", "--experimental-inspector-network-resource", "--experimental-worker-inspection",
		"--experimental-print-required-tla", "--experimental-test-coverage", "--experimental-test-module-mocks",
		"--experimental-test-snapshots", "--experimental-vm-modules", "--experimental-wasm-modules", "--experimental-websocket",
		"--experimental-detect-module", "--experimental-fetch", "--experimental-global-customevent", "--experimental-global-webcrypto",
		"--experimental-global-navigator", "--experimental-repl-await", "--experimental-require-module", "--experimental-strip-types",
		"--experimental-transform-types", "--experimental-sqlite", "--experimental-webstorage", "--experimental-shadow-realm",
		"--experimental-async-context-frame", "--async-context-frame", "--experimental-addon-modules", "--experimental-quic",
		"--experimental-wasi-unstable-preview1",
		"--expose-gc", "--expose-internals", "--force-context-aware", "--force-node-api-uncaught-exceptions-policy",
		"--frozen-intrinsics", "--huge-max-old-generation-size", "--insecure-http-parser", "--interpreted-frames-native-stack",
		"--jitless", "--addons", "--deprecation", "--extra-info-on-fatal-exception", "--force-async-hooks-checks",
		"--global-search-paths", "--network-family-autoselection", "--enable-network-family-autoselection", "--warnings",
		"--node-memory-debug", "--openssl-legacy-provider", "--openssl-shared-config", "--pending-deprecation",
		"--preserve-symlinks", "--preserve-symlinks-main", "--report-compact", "--report-exclude-network", "--report-exclude-env",
		"--report-on-fatalerror", "--report-on-signal", "--report-uncaught-exception", "--test", "--test-force-exit",
		"--test-only", "--test-update-snapshots", "--throw-deprecation", "--tls-max-v1.2", "--tls-max-v1.3", "--tls-min-v1.0",
		"--tls-min-v1.1", "--tls-min-v1.2", "--tls-min-v1.3", "--trace-atomics-wait", "--trace-deprecation", "--trace-env",
		"--trace-env-js-stack", "--trace-env-native-stack", "--trace-exit", "--trace-promises", "--trace-sigint",
		"--trace-sync-io", "--trace-tls", "--trace-uncaught", "--trace-warnings", "--track-heap-objects", "--use-bundled-ca",
		"--use-openssl-ca", "--use-system-ca", "--use-env-proxy", "--watch-preserve-output", "--zero-fill-buffers",
		// V8's
		"--harmony", "--harmony-shadow-realm", "--allow-natives-syntax", "--perf-basic-prof", "--perf-basic-prof-only-functions",
		"--perf-prof", "--perf-prof-unwinding-info", "--trace-gc", "--trace-opt", "--trace-deopt", "--optimize-for-size",
		"--single-threaded", "--single-threaded-gc", "--predictable", "--opt", "--lazy", "--expose-externalize-string"},
	withValue: []string{"-C", "--conditions", "--title", "--input-type", "--inspect-port", "--debug-port", "--inspect-publish-uid",
		"--allow-fs-read", "--allow-fs-write", "--cpu-prof-dir", "--cpu-prof-interval", "--cpu-prof-name", "--heap-prof-dir",
		"--heap-prof-interval", "--heap-prof-name", "--diagnostic-dir", "--disable-proto", "--disable-warning", "--dns-result-order",
		"--experimental-default-type", "--experimental-sea-config", "--experimental-specifier-resolution", "--experimental-test-isolation",
		"--test-isolation", "--heapsnapshot-near-heap-limit", "--heapsnapshot-signal", "--icu-data-dir", "--localstorage-file",
		"--max-http-header-size", "--network-family-autoselection-attempt-timeout", "--policy-integrity", "--redirect-warnings",
		"--report-directory", "--report-dir", "--report-filename", "--report-signal", "--secure-heap", "--secure-heap-min",
		"--test-concurrency", "--test-name-pattern", "--test-skip-pattern", "--test-reporter-destination", "--test-shard",
		"--test-timeout", "--test-coverage-include", "--test-coverage-exclude", "--test-coverage-branches",
		"--test-coverage-functions", "--test-coverage-lines", "--tls-cipher-list", "--tls-keylog", "--trace-event-categories",
		"--trace-event-file-pattern", "--trace-require-module", "--unhandled-rejections", "--use-largepages", "--v8-pool-size",
		"--watch-kill-signal", "--max-old-space-size-percentage"},
	// An env file or a config file may set NODE_OPTIONS (or
	// "nodeOptions") to --require or --import a module of its choice;
	// OpenSSL's configuration can load shared libraries; a snapshot blob
	// holds code, and a snapshot config names a builder script node runs;
	// a policy can redirect modules; --watch runs the file again when it
	// changes, unchecked; --run runs a package.json script; the test
	// runner loads its setup module and reporters; --entry-url reads the
	// script as a URL. Also read in NODE_OPTIONS (launch_env.go).
	// --test runs every argument as a test file pattern, not the script.
	lateRefused: []string{"--test"},
	foreignCode: []string{"-e", "--eval", "-p", "--print", "-pe", "-r", "--require", "--import", "--loader", "--experimental-loader",
		"-i", "--interactive", "--env-file", "--env-file-if-exists", "--experimental-config-file", "--experimental-default-config-file",
		"--openssl-config", "--snapshot-blob", "--build-snapshot-config", "--experimental-policy", "--watch", "--watch-path", "--run",
		"--test-global-setup", "--test-reporter", "--entry-url",
		"--inspect", "--inspect-brk", "--inspect-wait", "--inspect-brk-node"},
	longEq:    true,
	negatable: true,
	spell:     nodeSpelling,
}

// pythonOpts: `python3 --help` of 3.11 (3.12 and 3.13 add no option);
// python has no --name=value form. -W's filter names a warning category by
// module (imported before the script) and -X pycache_prefix a cache of
// compiled code: pythonWarningRefusal, pythonXRefusal.
var pythonOpts = &optTable{
	name:        "python",
	flags:       []string{"-b", "-B", "-d", "-E", "-h", "-?", "-I", "-O", "-P", "-q", "-R", "-s", "-S", "-u", "-v", "-V", "-x", "--help", "--help-env", "--help-xoptions", "--help-all", "--version"},
	withValue:   []string{"-W", "-X", "--check-hash-based-pycs"},
	foreignCode: []string{"-c", "-m", "-i"},
	checkValue:  map[string]func(string) string{"-W": pythonWarningRefusal, "-X": pythonXRefusal},
}

// perlOpts: perlrun (`perl -h`, perl 5.36). -M/-m load a module before the
// script (-M-Foo too: "no Foo" loads Foo), -d the debugger (PERL5DB) or a
// Devel:: module, -F's pattern is put into the code perl runs, -S looks the
// script up on PATH rather than where clawd pinned it. -x runs the pinned
// file from its #!perl line; with a directory, perl changes to it after
// opening the file. -n/-p/-a wrap the script's own code in a loop. perl
// reads more options after a blank inside an argument (-w -MFoo), and
// PERL5OPT's words without "-" as options.
var perlOpts = &optTable{
	name:          "perl",
	flags:         []string{"-a", "-c", "-f", "-g", "-h", "-n", "-p", "-s", "-t", "-T", "-u", "-U", "-v", "-w", "-W", "-X", "--help", "--version"},
	withValue:     []string{"-I"},
	restValue:     []string{"-C", "-D", "-i", "-x", "-V"},
	digitValue:    []string{"-0", "-l"},
	hexDigits:     true,
	foreignCode:   []string{"-e", "-E", "-M", "-m", "-d", "-F", "-S"},
	blankSwitches: true,
	bareWords:     true,
}

// rubyOpts: ruby(1) and ruby's option parser (3.3; 3.4 adds none). -C/-X
// DIR and -xDIR change directory before the script is read, so another
// file than the pinned one would run; -S looks it up on PATH; -r requires a
// library first; --crash-report=|CMD pipes a crash report to a command.
// -n/-p/-a wrap the script's own code in a loop over its input. Long
// options take "=VALUE" or the next argument; --enable-FEATURE and
// --yjit-OPT=VALUE are one word. RUBYOPT's words without "-" are options.
var rubyOpts = &optTable{
	name: "ruby",
	flags: []string{"-a", "-c", "-d", "-h", "-l", "-n", "-p", "-s", "-U", "-v", "-w", "-y",
		"--copyright", "--version", "--verbose", "--help", "--jit", "--yjit", "--rjit", "--mjit", "--yydebug", "--debug"},
	flagPrefixes: []string{"--enable-", "--disable-", "--debug-", "--yjit-", "--rjit-", "--mjit-"},
	withValue: []string{"-I", "-E", "--enable", "--disable", "--encoding", "--external-encoding", "--internal-encoding",
		"--parser", "--backtrace-limit", "--dump"},
	restValue:       []string{"-F", "-W", "-i", "-x"},
	digitValue:      []string{"-0"},
	foreignCode:     []string{"-e", "-r", "-C", "-X", "-S"},
	foreignPrefixes: []string{"--crash-report"},
	checkValue:      map[string]func(string) string{"-x": rubyXRefusal, "-W": rubyWRefusal},
	longEq:          true,
	bareWords:       true,
}

// phpOpts: the php CLI's option table (PHP 8.3). -c/--php-ini reads another ini
// file (it can set auto_prepend_file), -z loads a zend extension,
// -r/-B/-R/-F/-E run code given on the command line (or a file per input
// line), -a is the interactive shell, -S/-t the built-in web server, which
// runs any file of its document root. -d's value is checked
// (phpIniRefusal). php drops an "=" between a letter and its value (-d=K
// is -d K), and reads its code from stdin after "--" when no script came
// before.
var phpOpts = &optTable{
	name: "php",
	flags: []string{"-C", "-e", "-h", "-i", "-l", "-m", "-n", "-q", "-H", "-s", "-v", "-w", "-?",
		"--no-chdir", "--profile-info", "--help", "--info", "--syntax-check", "--modules", "--no-php-ini", "--no-header",
		"--hide-args", "--syntax-highlight", "--syntax-highlighting", "--strip", "--usage", "--version", "--ini"},
	withValue: []string{"-d", "--define", "--rf", "--rfunction", "--rc", "--rclass", "--re", "--rextension",
		"--rz", "--rzendextension", "--ri", "--rextinfo", "--repeat"},
	scriptValue: []string{"-f", "--file"},
	foreignCode: []string{"-a", "--interactive", "-c", "--php-ini", "-z", "--zend-extension",
		"-r", "--run", "-B", "--process-begin", "-R", "--process-code", "-F", "--process-file",
		"-E", "--process-end", "-S", "--server", "-t", "--docroot"},
	checkValue: map[string]func(string) string{"-d": phpIniRefusal, "--define": phpIniRefusal},
	longEq:     true,
	shortEq:    true,
	endStdin:   true,
}

// denoOpts: `deno run`'s arguments as deno 2 defines them (clap): a value
// after "=" or as the next argument (never one starting with "-"), the
// permission flags and others with an optional value only after "=".
// --preload (--import, --require) loads modules first; --watch and
// --watch-hmr run the files again when they change, unchecked; --inspect*
// open the debugger; an env file (--env-file, --env) may set DENO_DIR and
// the other variables the server's env may not.
var denoOpts = &optTable{
	name: "deno",
	flags: []string{"-A", "--allow-all", "-P", "--permission-set", "-R", "--allow-read", "--deny-read", "--ignore-read",
		"-W", "--allow-write", "--deny-write", "-N", "--allow-net", "--deny-net", "-E", "--allow-env", "--deny-env", "--ignore-env",
		"-S", "--allow-sys", "--deny-sys", "--allow-run", "--deny-run", "--allow-ffi", "--deny-ffi", "--allow-hrtime", "--deny-hrtime",
		"-I", "--allow-import", "--deny-import", "--allow-scripts", "--no-prompt",
		"--check", "--no-check", "--no-remote", "--no-npm", "--node-modules-dir", "--vendor", "--no-config", "-r", "--reload",
		"--no-lock", "--lock-write", "--frozen", "--frozen-lockfile", "--unsafely-ignore-certificate-errors", "--cached-only",
		"--v8-flags", "--trace-ops", "--no-clear-screen", "--watch-exclude", "--no-code-cache", "--coverage", "-t", "--tunnel",
		"--connected", "--cpu-prof", "--cpu-prof-md", "--cpu-prof-flamegraph", "--inspect-publish-uid", "--unstable",
		"--sloppy-imports", "-q", "--quiet", "-h", "--help"},
	flagPrefixes: []string{"--unstable-"},
	withValue: []string{"-c", "--config", "--import-map", "--importmap", "--conditions", "--cert", "--minimum-dependency-age",
		"--location", "--seed", "--ext", "--cpu-prof-dir", "--cpu-prof-name", "--cpu-prof-interval", "-L", "--log-level"},
	optValue: []string{"--lock"},
	foreignCode: []string{"--preload", "--import", "--require", "--watch", "--watch-hmr", "--unstable-hmr",
		"--inspect", "--inspect-brk", "--inspect-wait", "--env-file", "--env"},
	longEq: true,
	clapEq: true,
}

// bunOpts: bun's run and auto-command parameters (bun 1.3's argument parser).
// --require and --import are --preload; --hot and --watch reload changed
// files, unchecked; a config file (bunfig.toml) can preload modules; --cwd
// makes bun read FILE from another directory than the one clawd pinned it
// in; --filter and --workspaces run package.json scripts. Also read in
// BUN_OPTIONS (launch_env.go).
var bunOpts = &optTable{
	name: "bun",
	flags: []string{"--no-clear-screen", "--smol", "--cpu-prof", "--cpu-prof-md", "--heap-prof", "--heap-prof-md",
		"--if-present", "--no-install", "-i", "--prefer-offline", "--prefer-latest", "--expose-gc", "--no-deprecation",
		"--throw-deprecation", "--zero-fill-buffers", "--use-system-ca", "--use-openssl-ca", "--use-bundled-ca",
		"--redis-preconnect", "--sql-preconnect", "--no-addons", "-b", "--bun", "--silent", "-v", "--version", "--revision",
		"--preserve-symlinks", "--preserve-symlinks-main", "--no-macros", "--jsx-side-effects", "--ignore-dce-annotations",
		"--no-env-file", "-h", "--help", "--verbose-error-trace"},
	withValue: []string{"--cpu-prof-name", "--cpu-prof-dir", "--heap-prof-name", "--heap-prof-dir", "--install", "--port",
		"-u", "--origin", "--conditions", "--fetch-preconnect", "--max-http-header-size", "--dns-result-order", "--title",
		"--unhandled-rejections", "--console-depth", "--user-agent", "--shell", "--elide-lines", "--main-fields",
		"--extension-order", "--tsconfig-override", "-d", "--define", "--drop", "--feature", "-l", "--loader",
		"--jsx-factory", "--jsx-fragment", "--jsx-import-source", "--jsx-runtime", "--env-file"},
	foreignCode: []string{"-e", "--eval", "-p", "--print", "-r", "--preload", "--require", "--import",
		"--hot", "--watch", "-c", "--config", "--cwd", "-F", "--filter", "--workspaces",
		"--inspect", "--inspect-brk", "--inspect-wait"},
	longEq: true,
	clapEq: true,
}

// luaOpts: lua(1) of Lua 5.4 and luajit's: one option per argument. -l
// loads a module from the search path; luajit's -j loads a JIT extension
// module and -b runs its bytecode saver; -O takes its value attached.
var luaOpts = &optTable{
	name:        "lua",
	groups:      wholeWord,
	flags:       []string{"-E", "-W", "-v"},
	restValue:   []string{"-O"},
	foreignCode: []string{"-e", "-l", "-i", "-j", "-b"},
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

// pythonXRefusal refuses -X pycache_prefix, a cache of compiled code
// python runs in place of compiling the pinned files, and -X presite
// (3.13, debug builds), a module python imports before site and the
// script.
func pythonXRefusal(v string) string {
	switch name, _, _ := strings.Cut(v, "="); strings.TrimSpace(name) {
	case "pycache_prefix":
		return fmt.Sprintf("`-X %s` names a cache of compiled code python runs in place of the files it compiles, which clawd does not check; drop it", v)
	case "presite":
		return fmt.Sprintf("`-X %s` makes python import a module before the script, code clawd cannot pin; drop it", v)
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
// cache of compiled code, the command mail() runs, and the functions php
// calls by the name a setting gives: the one all output is handed to
// (output_handler=system would run it), the one a failed assert() calls and
// the one unserialize() calls with the name of a class it does not know.
var phpCodeKeys = []string{"auto_prepend_file", "auto_append_file", "extension", "zend_extension", "extension_dir",
	"opcache.preload", "opcache.file_cache", "ffi.preload", "sendmail_path", "output_handler",
	"assert.callback", "unserialize_callback_func"}

// phpIniRefusal says why php's -d KEY[=VALUE] makes php load code clawd
// cannot pin, or "". php appends the value to the ini text it parses, so a
// line break in it starts another setting; KEY[] sets KEY too. Xdebug's
// settings (xdebug.*) are refused: its debugger (xdebug.mode=debug) runs
// the code the client it connects to sends. Settings that only tune
// (memory_limit, display_errors...) pass, and so does include_path, a
// search path like the other runtimes' (a documented limit).
func phpIniRefusal(v string) string {
	if strings.ContainsAny(v, "\n\r") {
		return fmt.Sprintf("`-d %q` has a line break, after which php reads another ini setting clawd does not check; give each setting with a -d of its own", v)
	}
	key, _, _ := strings.Cut(v, "=")
	key = strings.ToLower(strings.TrimSpace(key))
	if i := strings.IndexByte(key, '['); i >= 0 {
		key = strings.TrimSpace(key[:i])
	}
	if slices.Contains(phpCodeKeys, key) || strings.HasPrefix(key, "xdebug.") {
		return fmt.Sprintf("`-d %s` makes php load or run code besides the script, which clawd cannot pin; drop it (put what the server needs in the script)", strings.TrimSpace(v))
	}
	return ""
}
