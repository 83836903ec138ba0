//go:build unix

package upstream

import (
	"strings"
	"testing"
)

// A runtime's code-loading variables are refused whatever the command: a
// plain executable may start that runtime (a wrapper that execs java -jar,
// a node single-executable app, a PyInstaller binary, a program that runs
// python or bash), which reads them from the environment it inherits.
// The message names the runtime and says it applies if the command
// starts it.
func TestEnvEveryRuntimeInAPlainExecutable(t *testing.T) {
	work := envTestSetup(t, "mytool")
	tool := []string{"mytool", "--stdio"}
	checkLaunchCases(t, work, []launchCase{
		// node, and bun, which reads NODE_OPTIONS too.
		{cmd: tool, env: envOf("NODE_OPTIONS", "--require /tmp/evil.js"), unpinned: "NODE_OPTIONS (read by node, if mytool starts it)"},
		{cmd: tool, env: envOf("NODE_OPTIONS", "--import=/tmp/evil.mjs"), unpinned: "--import"},
		{cmd: tool, env: envOf("NODE_OPTIONS", "--inspect=0.0.0.0:9229"), unpinned: "--inspect"},
		{cmd: tool, env: envOf("NODE_COMPILE_CACHE", "/tmp/cache"), unpinned: "compiled code node, if mytool starts it, runs"},
		// npm's settings, for a program that runs npm or npx.
		{cmd: tool, env: envOf("npm_config_node_options", "-r /tmp/evil.js"), unpinned: "npm_config_node_options (read by npm, if mytool starts it)"},
		{cmd: tool, env: envOf("NPM_CONFIG_SCRIPT_SHELL", "/tmp/evil.sh"), unpinned: "NPM_CONFIG_SCRIPT_SHELL"},
		{cmd: tool, env: envOf("npm_config_userconfig", "/tmp/evil.npmrc"), unpinned: "npm_config_userconfig"},
		{cmd: tool, env: envOf("npm_config_globalconfig", "/tmp/evil.npmrc"), unpinned: "npm_config_globalconfig"},
		{cmd: tool, env: envOf("npm_config_prefix", "/tmp/evil"), unpinned: "npm_config_prefix"},
		{cmd: tool, env: envOf("npm_config_package", "evil@1.0.0"), unpinned: "npm_config_package"},
		// The JVM, in a launcher (jpackage, launch4j) or a wrapper.
		{cmd: tool, env: envOf("JAVA_TOOL_OPTIONS", "-javaagent:/tmp/a.jar"), unpinned: "JAVA_TOOL_OPTIONS (read by java, if mytool starts it)"},
		{cmd: tool, env: envOf("JDK_JAVA_OPTIONS", "-agentpath:/tmp/a.so"), unpinned: "JDK_JAVA_OPTIONS"},
		{cmd: tool, env: envOf("_JAVA_OPTIONS", "-Dcom.sun.management.jmxremote.port=9999"), unpinned: "_JAVA_OPTIONS"},
		// python, in a PyInstaller binary or a program that runs it.
		{cmd: tool, env: envOf("PYTHONINSPECT", "0"), unpinned: "python, if mytool starts it,"},
		{cmd: tool, env: envOf("PYTHONHOME", "/tmp/py"), unpinned: "PYTHONHOME"},
		{cmd: tool, env: envOf("PYTHONPLATLIBDIR", "/tmp/py"), unpinned: "PYTHONPLATLIBDIR"},
		{cmd: tool, env: envOf("PYTHONEXECUTABLE", "/tmp/venv/bin/python"), unpinned: "PYTHONEXECUTABLE"},
		{cmd: tool, env: envOf("__PYVENV_LAUNCHER__", "/tmp/venv/bin/python"), unpinned: "__PYVENV_LAUNCHER__"},
		{cmd: tool, env: envOf("PYTHONPYCACHEPREFIX", "/tmp/pyc"), unpinned: "PYTHONPYCACHEPREFIX"},
		{cmd: tool, env: envOf("PYTHONWARNINGS", "ignore::evilmod.W"), unpinned: "evilmod"},
		{cmd: tool, env: envOf("PYTHONUSERBASE", "/tmp/ub"), unpinned: "PYTHONNOUSERSITE=1"},
		// perl, ruby, php, lua, R.
		{cmd: tool, env: envOf("PERL5OPT", "-MEvil"), unpinned: "PERL5OPT (read by perl, if mytool starts it)"},
		{cmd: tool, env: envOf("PERL5DB", "BEGIN { system 'x' }"), unpinned: "PERL5DB"},
		{cmd: tool, env: envOf("RUBYOPT", "-revil"), unpinned: "RUBYOPT (read by ruby, if mytool starts it)"},
		{cmd: tool, env: envOf("BUNDLER_SETUP", "/tmp/evil.rb"), unpinned: "BUNDLER_SETUP"},
		{cmd: tool, env: envOf("RUBYGEMS_GEMDEPS", "-"), unpinned: "RUBYGEMS_GEMDEPS"},
		{cmd: tool, env: envOf("RUBY_CRASH_REPORT", "|/tmp/evil"), unpinned: "RUBY_CRASH_REPORT"},
		{cmd: tool, env: envOf("PHPRC", "/tmp/php.ini"), unpinned: "php, if mytool starts it,"},
		{cmd: tool, env: envOf("PHP_INI_SCAN_DIR", ":/tmp/ini"), unpinned: "PHP_INI_SCAN_DIR"},
		{cmd: tool, env: envOf("XDEBUG_MODE", "debug"), unpinned: "XDEBUG_MODE"},
		{cmd: tool, env: envOf("LUA_INIT", "@/tmp/evil.lua"), unpinned: "lua, if mytool starts it,"},
		{cmd: tool, env: envOf("LUA_INIT_5_4", "os.execute'x'"), unpinned: "LUA_INIT_5_4"},
		{cmd: tool, env: envOf("RHOME", "/tmp/r"), unpinned: "R, if mytool starts it,"},
		{cmd: tool, env: envOf("R_PROFILE", "/tmp/evil.R"), unpinned: "R_PROFILE"},
		{cmd: tool, env: envOf("R_PROFILE_USER", "/tmp/evil.R"), unpinned: "R_PROFILE_USER"},
		{cmd: tool, env: envOf("R_ENVIRON", "/tmp/evil"), unpinned: "R_ENVIRON"},
		{cmd: tool, env: envOf("R_ENVIRON_USER", "/tmp/evil"), unpinned: "R_ENVIRON_USER"},
		{cmd: tool, env: envOf("R_TESTS", "/tmp/evil.R"), unpinned: "R_TESTS"},
		{cmd: tool, env: envOf("R_DEFAULT_PACKAGES", "evilpkg"), unpinned: "R_DEFAULT_PACKAGES"},
		{cmd: tool, env: envOf("R_ARCH", "/../../tmp/evil"), unpinned: "R_ARCH"},
		// deno and bun, and their compiled executables.
		{cmd: tool, env: envOf("DENO_DIR", "/tmp/deno"), unpinned: "deno, if mytool starts it,"},
		{cmd: tool, env: envOf("DENO_TSC_BIN", "/tmp/tsc"), unpinned: "DENO_TSC_BIN"},
		{cmd: tool, env: envOf("BUN_OPTIONS", "--preload ./evil.ts"), unpinned: "BUN_OPTIONS (read by bun, if mytool starts it)"},
		{cmd: tool, env: envOf("BUN_RUNTIME_TRANSPILER_CACHE_PATH", "/tmp/pile"), unpinned: "BUN_RUNTIME_TRANSPILER_CACHE_PATH"},
		{cmd: tool, env: envOf("BUN_INSPECT", "ws://localhost:6499/x"), unpinned: "BUN_INSPECT"},
		// The shells' own variables: bash's startup file, zsh's startup
		// directory, the trace prompt (SHELLOPTS=xtrace turns tracing on
		// from the environment).
		{cmd: tool, env: envOf("BASH_ENV", "/tmp/evil.sh"), unpinned: "bash, if mytool starts it,"},
		{cmd: tool, env: envOf("ZDOTDIR", "/tmp/evil"), unpinned: "zsh, if mytool starts it,"},
		{cmd: tool, env: envOf("PS4", "$(evil)", "SHELLOPTS", "xtrace"), unpinned: "PS4"},
	})
}

// What tunes a runtime and loads nothing passes for a plain executable as
// it does for the runtime, and so do the variables with a broad meaning
// that only the programs clawd recognises read as code (HOME, ENV, the
// XDG directories, APPDATA, PREFIX, DESTDIR, USERPROFILE), and the search
// paths (a limit).
func TestEnvPlainExecutableTuningPasses(t *testing.T) {
	work := envTestSetup(t, "mytool")
	tool := []string{"mytool", "--stdio"}
	checkLaunchCases(t, work, []launchCase{
		{cmd: tool, env: envOf("NODE_OPTIONS", "--max-old-space-size=4096", "PYTHONUNBUFFERED", "1", "JAVA_TOOL_OPTIONS", "-Xmx1g")},
		{cmd: tool, env: envOf("NODE_OPTIONS", "--max-old-space-size=4096 --enable-source-maps --no-warnings",
			"JDK_JAVA_OPTIONS", "-Xss4m -Dfile.encoding=UTF-8", "_JAVA_OPTIONS", "-Djava.awt.headless=true")},
		{cmd: tool, env: envOf("PYTHONDONTWRITEBYTECODE", "1", "PYTHONIOENCODING", "utf-8", "PYTHONWARNINGS", "ignore::DeprecationWarning",
			"PYTHONINSPECT", "", "PYTHONHOME", "")},
		{cmd: tool, env: envOf("PERL5OPT", "-w", "RUBYOPT", "-W0", "BUN_OPTIONS", "--smol", "BUN_RUNTIME_TRANSPILER_CACHE_PATH", "0",
			"R_DEFAULT_PACKAGES", "NULL", "XDEBUG_MODE", "off", "npm_config_node_options", "--max-old-space-size=4096",
			"npm_config_cache", "/tmp/c", "npm_config_registry", "https://registry.example/")},
		// Read as code only by the programs clawd recognises: python's
		// user site (HOME, APPDATA), npm's .npmrc (HOME, USERPROFILE,
		// PREFIX, DESTDIR), sh's ENV, fish's XDG directories.
		{cmd: tool, env: envOf("HOME", "/srv/home", "APPDATA", "/srv/appdata", "USERPROFILE", "/srv/home", "PREFIX", "/usr/local",
			"DESTDIR", "/tmp/stage", "ENV", "production", "XDG_CONFIG_HOME", "/srv/cfg", "XDG_DATA_HOME", "/srv/data",
			"XDG_DATA_DIRS", "/usr/share")},
		// PYTHONNOUSERSITE reaches the python the command starts too, and
		// turns its user site directory off.
		{cmd: tool, env: envOf("PYTHONUSERBASE", "/tmp/ub", "PYTHONNOUSERSITE", "1")},
		{cmd: tool, env: envOf("PYTHONPATH", "/opt/lib", "NODE_PATH", "/opt/lib", "PERL5LIB", "/opt/lib", "RUBYLIB", "/opt/lib", "LUA_PATH", "/opt/?.lua")},
	})
}

// Another runtime's variables are refused in a recognised runtime too (a
// node server may run python), named as another program's; a runtime's
// own are named as its own, through a #! line too.
func TestEnvOtherRuntimesInARuntime(t *testing.T) {
	work := envTestSetup(t, "node", "python3", "dash")
	checkLaunchCases(t, work, []launchCase{
		{cmd: nodeJS, env: envOf("PYTHONINSPECT", "1"), unpinned: "python, if node starts it,"},
		{cmd: nodeJS, env: envOf("PERL5OPT", "-MEvil"), unpinned: "read by perl, if node starts it"},
		{cmd: nodeJS, env: envOf("BASH_ENV", "/tmp/evil.sh"), unpinned: "BASH_ENV"},
		{cmd: nodeJS, env: envOf("npm_config_node_options", "--require /tmp/evil.js"), unpinned: "npm_config_node_options"},
		{cmd: nodeJS, env: envOf("NODE_COMPILE_CACHE", "/tmp/c"), unpinned: "compiled code node runs"},
		{cmd: []string{"python3", "x.py"}, env: envOf("NODE_OPTIONS", "-r /tmp/evil.js"), unpinned: "node, if python3 starts it"},
		{cmd: []string{"dash", "x.sh"}, env: envOf("BASH_ENV", "/tmp/evil.sh"), unpinned: "bash, if dash starts it"},
		// The broad ones stay with their programs.
		{cmd: nodeJS, env: envOf("HOME", "/srv/home", "ENV", "production", "XDG_CONFIG_HOME", "/srv/cfg", "PREFIX", "/usr/local"), script: "x.js"},
	})
	shebangProg(t, "mcp-srv", "#!/usr/bin/env node")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"mcp-srv"}, env: envOf("NODE_COMPILE_CACHE", "/tmp/c"), unpinned: "compiled code node (the #! interpreter of"},
		{cmd: []string{"mcp-srv"}, env: envOf("NODE_OPTIONS", "-r /tmp/e.js"), unpinned: "NODE_OPTIONS, whose option"},
	})
}

// Every runtime's message reads as a sentence when the command is not
// recognised as the runtime: the reader's clause is not followed by more
// punctuation.
func TestEnvReaderClauseReads(t *testing.T) {
	for _, r := range everyProgram {
		if r.reader == "" || r.opts != nil {
			continue
		}
		prog, known := r.readerIn("mytool", []envProgram{{"", "mytool", nil}})
		msg := r.refusal(r.name, "x", prog, known)
		if known || !strings.Contains(msg, r.reader+", if mytool starts it, ") {
			t.Errorf("%s: %q; want the reader's clause followed by a word", r.name, msg)
		}
	}
}
