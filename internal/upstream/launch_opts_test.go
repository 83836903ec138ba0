//go:build unix

package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// optsTestSetup puts fake interpreters named progs on PATH and returns a
// working directory holding the scripts the cases name, and files named
// like the values of options (100, prism, dev, 3000, all): were such a
// value taken for the script, it would be pinned, not refused as missing.
func optsTestSetup(t *testing.T, progs ...string) string {
	t.Helper()
	fakeProgs(t, progs...)
	work := t.TempDir()
	for _, f := range []string{"x.js", "other.js", "+evil.js", "x.py", "+e.py", "x.pl", "x.rb", "x.php", "x.ts", "other.ts",
		"x.sh", "other.sh", "x.fish", "x.lua", "x.R", "y.R", "server.jar", "Srv.java", "Other.java",
		"100", "4096", "prism", "dev", "3000", "all", "always", "-"} {
		if err := os.WriteFile(filepath.Join(work, f), []byte("// "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// An option clawd does not know is refused: it cannot tell whether the
// runtime takes the next argument as its value, and so which argument is
// the script. Known options are read as each runtime reads them.
func TestUnknownOptionsRefused(t *testing.T) {
	work := optsTestSetup(t, "node", "python3", "perl", "ruby", "php", "deno", "bun", "lua", "luajit")
	checkLaunchCases(t, work, []launchCase{
		// node reads --redirect-warnings FILE: the script is the next one.
		{cmd: []string{"node", "--redirect-warnings", "x.js", "other.js"}, script: "other.js"},
		{cmd: []string{"node", "--some-future-option", "x.js", "other.js"}, unpinned: "`--some-future-option` is not an option clawd knows for node"},
		{cmd: []string{"node", "--some-future-option", "x.js"}, unpinned: "`--some-future-option=VALUE`"},
		// V8's options take their value only after "=": node hands V8 the
		// name alone and exits.
		{cmd: []string{"node", "--stack-size", "100", "x.js"}, unpinned: "`--stack-size=VALUE`"},
		{cmd: []string{"node", "--max-old-space-size", "4096", "x.js"}, unpinned: "--max-old-space-size"},
		{cmd: []string{"node", "--stack-size=100", "--max-old-space-size=4096", "x.js"}, script: "x.js"},
		{cmd: []string{"node", "--no-warnings", "--enable-source-maps", "--no-deprecation", "--expose-gc", "--harmony", "x.js"}, script: "x.js"},
		{cmd: []string{"node", "--no-experimental-fetch", "--experimental-fetch", "--no-addons", "x.js"}, script: "x.js"},
		{cmd: []string{"node", "-harmony", "x.js"}, unpinned: "`-harmony`"},
		// node takes no value that starts with "-".
		{cmd: []string{"node", "--title", "--require", "x.js"}, unpinned: "`--title` is followed by `--require`"},
		// A build snapshot config names a builder script node runs; an
		// entry URL is not a file.
		{cmd: []string{"node", "--build-snapshot-config", "c.json", "x.js"}, unpinned: "--build-snapshot-config"},
		{cmd: []string{"node", "--entry-url", "x.js"}, unpinned: "--entry-url"},
		// "+" starts no option of node's or python's: "+evil.js" is the script.
		{cmd: []string{"node", "+evil.js", "x.js"}, script: "+evil.js"},
		{cmd: []string{"python3", "+e.py", "x.py"}, script: "+e.py"},
		{cmd: []string{"python3", "-q", "-X", "importtime", "-OO", "-bb", "x.py"}, script: "x.py"},
		{cmd: []string{"python3", "--check-hash-based-pycs", "always", "x.py"}, script: "x.py"},
		// python has no --name=value form, and no -Z.
		{cmd: []string{"python3", "--check-hash-based-pycs=always", "x.py"}, unpinned: "--check-hash-based-pycs=always"},
		{cmd: []string{"python3", "-Z", "x.py"}, unpinned: "`-Z`"},
		{cmd: []string{"python3", "-uZ", "x.py"}, unpinned: "`-Z` (in `-uZ`)"},
		// python's debug builds import the module -X presite names
		// before site, and so before the script.
		{cmd: []string{"python3", "-X", "presite=evil", "x.py"}, unpinned: "presite"},
		{cmd: []string{"python3", "-Xpresite=pkg.evil", "x.py"}, unpinned: "presite"},
		{cmd: []string{"python3", "-X", "dev", "-X", "frozen_modules=off", "x.py"}, script: "x.py"},
		{cmd: []string{"perl", "-g", "-T", "x.pl"}, script: "x.pl"},
		// perl's -D takes the letters or digits after it (debug output on
		// a DEBUGGING build, skipped on others), never the next argument
		// nor a switch after them: what follows is perl's, read as such.
		{cmd: []string{"perl", "-Dtls", "x.pl"}, script: "x.pl"},
		{cmd: []string{"perl", "-D14", "-w", "x.pl"}, script: "x.pl"},
		{cmd: []string{"perl", "-Dx", "-MEvil", "x.pl"}, unpinned: "`-MEvil`"},
		{cmd: []string{"perl", "-wDx", "-d:Evil", "x.pl"}, unpinned: "`-d:Evil`"},
		{cmd: []string{"perl", "-q", "x.pl"}, unpinned: "`-q`"},
		// ruby's long options with a separate value.
		{cmd: []string{"ruby", "--parser", "prism", "x.rb"}, script: "x.rb"},
		{cmd: []string{"ruby", "--backtrace-limit", "100", "--enable-frozen-string-literal", "--yjit", "x.rb"}, script: "x.rb"},
		// --crash-report=|CMD pipes a crash report to a command.
		{cmd: []string{"ruby", "--crash-report", "|sh -c evil", "x.rb"}, unpinned: "--crash-report"},
		{cmd: []string{"ruby", "--crash-report=|sh", "x.rb"}, unpinned: "--crash-report"},
		{cmd: []string{"ruby", "-K", "x.rb"}, unpinned: "`-K`"},
		{cmd: []string{"php", "--rf", "strlen", "-H", "x.php"}, script: "x.php"},
		{cmd: []string{"php", "-g", "x", "x.php"}, unpinned: "`-g`"},
		{cmd: []string{"deno", "run", "--conditions", "dev", "--seed", "100", "--lock", "x.ts"}, unpinned: "no script"},
		{cmd: []string{"deno", "run", "--conditions", "dev", "--lock", "-A", "x.ts"}, script: "x.ts"},
		{cmd: []string{"deno", "run", "-R=/tmp", "-Aq", "--allow-net=example.com", "--unstable-kv", "x.ts"}, script: "x.ts"},
		// deno's --env-file takes its value only after "=", and the file
		// may set DENO_DIR and the like, which the server's env may not.
		{cmd: []string{"deno", "run", "--env-file", "x.ts", "other.ts"}, unpinned: "--env-file"},
		{cmd: []string{"deno", "run", "--some-future-option", "x.ts", "other.ts"}, unpinned: "`--some-future-option` is not an option clawd knows for deno"},
		{cmd: []string{"bun", "--port", "3000", "x.ts"}, script: "x.ts"},
		// --filter and --workspaces run package.json scripts.
		{cmd: []string{"bun", "--filter", "pkg", "x.ts"}, unpinned: "--filter"},
		{cmd: []string{"bun", "run", "--workspaces", "x.ts"}, unpinned: "--workspaces"},
		{cmd: []string{"bun", "--some-future-option", "x.ts", "other.ts"}, unpinned: "`--some-future-option` is not an option clawd knows for bun"},
		{cmd: []string{"lua", "-q", "x.lua"}, unpinned: "`-q`"},
		{cmd: []string{"lua", "-vE", "x.lua"}, unpinned: "`-vE`"},
	})
}

// The shells: each one's options read with its own table; a shell the
// command may be under another name (sh as dash or bash) must read the
// same script.
func TestShellOptions(t *testing.T) {
	dir := fakeProgs(t, "bash", "dash", "zsh", "fish", "tcsh", "ksh", "mksh")
	if err := os.Symlink(filepath.Join(dir, "dash"), filepath.Join(dir, "sh")); err != nil {
		t.Fatal(err)
	}
	work := optsTestSetup(t)
	checkLaunchCases(t, work, []launchCase{
		// bash's -C is noclobber (fish's runs code).
		{cmd: []string{"bash", "-C", "x.sh"}, script: "x.sh"},
		{cmd: []string{"bash", "-O", "extglob", "-o", "pipefail", "--norc", "x.sh"}, script: "x.sh"},
		// fish's -d takes a value.
		{cmd: []string{"fish", "-d", "all", "x.fish"}, script: "x.fish"},
		{cmd: []string{"fish", "--debug=all", "-N", "x.fish"}, script: "x.fish"},
		// A login shell runs ~/.profile and the like first; bash's
		// debugger profile (--debugger, -O extdebug) is code from elsewhere.
		{cmd: []string{"bash", "-l", "x.sh"}, unpinned: "login shell"},
		{cmd: []string{"bash", "--login", "x.sh"}, unpinned: "login shell"},
		{cmd: []string{"zsh", "-o", "login", "x.sh"}, unpinned: "login"},
		{cmd: []string{"bash", "-O", "extdebug", "x.sh"}, unpinned: "extdebug"},
		{cmd: []string{"bash", "--debugger", "x.sh"}, unpinned: "--debugger"},
		// zsh reads -oNAME (bash -o and then letters): refused either way.
		{cmd: []string{"zsh", "-oerrexit", "x.sh", "other.sh"}, unpinned: "`-oerrexit`"},
		{cmd: []string{"bash", "-oe", "pipefail", "x.sh"}, unpinned: "`-oe`"},
		{cmd: []string{"zsh", "-ex", "--errexit", "x.sh"}, script: "x.sh"},
		// tcsh -t reads one line from stdin and runs it.
		{cmd: []string{"tcsh", "-t", "x.sh"}, unpinned: "`-t`"},
		{cmd: []string{"tcsh", "-fe", "x.sh"}, script: "x.sh"},
		// mksh -T takes a tty; ksh93 -E reads ~/.kshrc.
		{cmd: []string{"mksh", "-T", "/dev/tty1", "x.sh"}, script: "x.sh"},
		{cmd: []string{"ksh", "-E", "x.sh"}, unpinned: "`-E`"},
		// sh here is dash: bash's -O is none of dash's, nor of POSIX sh's.
		{cmd: []string{"sh", "-O", "extglob", "x.sh"}, unpinned: "`-O`"},
		{cmd: []string{"sh", "-eu", "x.sh"}, script: "x.sh"},
		{cmd: []string{"dash", "+x", "-o", "nounset", "x.sh"}, script: "x.sh"},
		{cmd: []string{"bash", "-q", "x.sh"}, unpinned: "`-q`"},
		// zsh's option "stdin" is an alias of shinstdin (-s): commands
		// from stdin, where clawd writes requests.
		{cmd: []string{"zsh", "-o", "stdin", "x.sh"}, unpinned: "`stdin`"},
		{cmd: []string{"zsh", "--stdin", "x.sh"}, unpinned: "`stdin`"},
		{cmd: []string{"zsh", "-o", "Sh_In_Stdin", "x.sh"}, unpinned: "Sh_In_Stdin"},
	})
}

// php: "--" with no script before it reads the code from stdin; -d's value
// as php hands it to its ini parser.
func TestPHPOptions(t *testing.T) {
	work := optsTestSetup(t, "php")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"php", "--", "x.php"}, unpinned: "stdin"},
		{cmd: []string{"php", "-n", "--", "x.php"}, unpinned: "stdin"},
		{cmd: []string{"php", "x.php", "--", "a"}, script: "x.php"},
		{cmd: []string{"php", "-f", "x.php", "--", "a"}, script: "x.php"},
		{cmd: []string{"php", "-f=x.php"}, script: "x.php"},
		// php reads options after -f FILE, up to the first other argument.
		{cmd: []string{"php", "-f", "x.php", "-d", "auto_prepend_file=/tmp/x.php"}, unpinned: "auto_prepend_file"},
		{cmd: []string{"php", "-f", "x.php", "-n", "a", "-d", "auto_prepend_file=/tmp/x.php"}, script: "x.php"},
		// php drops an "=" after a one-letter option: -d=KEY=VALUE is -d KEY=VALUE.
		{cmd: []string{"php", "-d=auto_prepend_file=/tmp/x.php", "x.php"}, unpinned: "auto_prepend_file"},
		// php appends -d's value to an ini string: a line break starts another setting.
		{cmd: []string{"php", "-d", "memory_limit=1\nauto_prepend_file=/tmp/x.php", "x.php"}, unpinned: "line break"},
		{cmd: []string{"php", "-d", "memory_limit=\"1\"\rextension=/tmp/e.so", "x.php"}, unpinned: "line break"},
		{cmd: []string{"php", "-d", "extension[]=/tmp/e.so", "x.php"}, unpinned: "extension"},
		// Xdebug's debugger runs the code its client sends.
		{cmd: []string{"php", "-d", "xdebug.mode=debug", "-d", "xdebug.start_with_request=yes", "x.php"}, unpinned: "xdebug.mode"},
		{cmd: []string{"php", "-dxdebug.client_host=10.0.0.1", "x.php"}, unpinned: "xdebug"},
		{cmd: []string{"php", "-d", "output_handler=system", "x.php"}, unpinned: "output_handler"},
		// Settings that name a function php calls: a failed assert(), an unknown class in unserialize().
		{cmd: []string{"php", "-d", "assert.callback=system", "x.php"}, unpinned: "assert.callback"},
		{cmd: []string{"php", "-d", "Unserialize_Callback_Func = passthru", "x.php"}, unpinned: "Unserialize_Callback_Func"},
		{cmd: []string{"php", "-d", "memory_limit=512M", "-d", "date.timezone=UTC", "x.php"}, script: "x.php"},
	})
}

// java: the JMX agent opens a port through which code can be loaded.
func TestJavaManagementRefused(t *testing.T) {
	work := optsTestSetup(t, "java")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"java", "-Dcom.sun.management.jmxremote.port=9010", "-jar", "server.jar"}, unpinned: "jmxremote"},
		{cmd: []string{"java", "-Dcom.sun.management.jmxremote", "-jar", "server.jar"}, unpinned: "jmxremote"},
		{cmd: []string{"java", "-Dcom.sun.management.config.file=/tmp/m.properties", "-jar", "server.jar"}, unpinned: "config.file"},
		{cmd: []string{"java", "-jar", "server.jar"}, env: envOf("JAVA_TOOL_OPTIONS", "-Dcom.sun.management.jmxremote.port=9010"), unpinned: "JAVA_TOOL_OPTIONS"},
		{cmd: []string{"java", "-XX:+UnlockExperimentalVMOptions", "-XX:JVMCILibPath=/tmp", "-jar", "server.jar"}, unpinned: "JVMCILibPath"},
		// Dynamic agent loading lets a process of the same user attach,
		// which can already do as much (a limit, documented).
		{cmd: []string{"java", "-XX:+EnableDynamicAgentLoading", "-jar", "server.jar"}, script: "server.jar"},
		// A long option java does not list may take the next argument.
		{cmd: []string{"java", "--some-future-option", "Srv.java", "Other.java"}, unpinned: "`--some-future-option`"},
		{cmd: []string{"java", "--sun-misc-unsafe-memory-access=allow", "--enable-preview", "--source", "21", "Srv.java"}, script: "Srv.java"},
		{cmd: []string{"java", "-splash:x.png", "-verbose:gc", "-esa", "-showversion", "-jar", "server.jar"}, script: "server.jar"},
		{cmd: []string{"java", "-foo", "-jar", "server.jar"}, unpinned: "`-foo`"},
	})
}

// Rscript: what R makes of the options Rscript hands it before --file=FILE.
func TestRscriptOptions(t *testing.T) {
	work := optsTestSetup(t, "Rscript")
	checkLaunchCases(t, work, []launchCase{
		// R's --encoding (and --min-vsize, --max-ppsize...) takes the next
		// argument, --file=FILE, and R then reads its code from stdin.
		{cmd: []string{"Rscript", "--encoding", "x.R", "y.R"}, unpinned: "`--encoding=VALUE`"},
		{cmd: []string{"Rscript", "--encoding=", "x.R"}, unpinned: "--encoding"},
		{cmd: []string{"Rscript", "--min-vsize", "x.R"}, unpinned: "--min-vsize"},
		{cmd: []string{"Rscript", "--encoding=latin1", "--min-vsize=10M", "x.R"}, script: "x.R"},
		// --arch=NAME makes R source etc/NAME/ldpaths, a shell script.
		{cmd: []string{"Rscript", "--arch=../../../tmp/x", "x.R"}, unpinned: "--arch"},
		// --interactive makes R read its commands from stdin.
		{cmd: []string{"Rscript", "--interactive", "x.R"}, unpinned: "--interactive"},
		{cmd: []string{"Rscript", "--some-future-option", "x.R"}, unpinned: "`--some-future-option`"},
		// R's front end splits its options at blanks and expands
		// wildcards in them: "--no-echo --args" would hide --file.
		{cmd: []string{"Rscript", "--vanilla", "--no-echo --args", "x.R"}, unpinned: "blank"},
		{cmd: []string{"Rscript", "x*.R"}, unpinned: "wildcard"},
		{cmd: []string{"Rscript", "--no-environ", "--no-init-file", "--quiet", "x.R"}, script: "x.R"},
	})
}

// The option variables are read with the same tables, options only.
func TestOptionVariables(t *testing.T) {
	work := optsTestSetup(t, "node", "ruby", "bun", "perl")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"node", "x.js"}, env: envOf("NODE_OPTIONS", "--some-future-option"), unpinned: "NODE_OPTIONS"},
		{cmd: []string{"node", "x.js"}, env: envOf("NODE_OPTIONS", "--build-snapshot-config=/tmp/c.json"), unpinned: "--build-snapshot-config"},
		{cmd: []string{"node", "x.js"}, env: envOf("NODE_OPTIONS", "--title srv --redirect-warnings /tmp/w.txt --no-warnings"), script: "x.js"},
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBYOPT", "--crash-report=|sh"), unpinned: "RUBYOPT"},
		{cmd: []string{"ruby", "x.rb"}, env: envOf("RUBYOPT", "-I /opt/lib -w --enable-frozen-string-literal"), script: "x.rb"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_OPTIONS", "--filter=pkg"), unpinned: "--filter"},
		{cmd: []string{"bun", "x.ts"}, env: envOf("BUN_OPTIONS", "--port 3000 --smol"), script: "x.ts"},
		{cmd: []string{"perl", "x.pl"}, env: envOf("PERL5OPT", "-Mstrict"), unpinned: "PERL5OPT"},
	})
}

// Every table lists each option once, and no option both as one that
// takes a value and as one that does not.
func TestOptionTablesConsistent(t *testing.T) {
	tables := map[string]*optTable{}
	for k, v := range interpreterOpts {
		tables[k] = v
	}
	for k, v := range shellOpts {
		tables["shell "+k] = v
	}
	for name, tb := range tables {
		seen := map[string]string{}
		for list, opts := range map[string][]string{"flags": tb.flags, "withValue": tb.withValue, "optValue": tb.optValue,
			"restValue": tb.restValue, "digitValue": tb.digitValue, "scriptValue": tb.scriptValue, "foreignCode": tb.foreignCode, "eqOnly": tb.eqOnly} {
			for _, o := range opts {
				if prev, ok := seen[o]; ok {
					t.Errorf("%s: %s is in %s and %s", name, o, prev, list)
				}
				seen[o] = list
				if !strings.HasPrefix(o, "-") {
					t.Errorf("%s: %s in %s does not start with -", name, o, list)
				}
			}
		}
		for o := range tb.refused {
			if _, ok := seen[o]; ok {
				t.Errorf("%s: %s is refused and listed", name, o)
			}
		}
	}
}

// "-" is stdin after "--" too (node, python, perl and ruby read their code
// from it there), whatever file named "-" the working directory holds.
func TestDashAfterDashDashRefused(t *testing.T) {
	work := optsTestSetup(t, "node", "python3", "perl", "ruby")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"node", "--", "-"}, unpinned: "stdin"},
		{cmd: []string{"python3", "-u", "--", "-"}, unpinned: "stdin"},
		{cmd: []string{"perl", "--", "-"}, unpinned: "stdin"},
		{cmd: []string{"ruby", "--", "-"}, unpinned: "stdin"},
		{cmd: []string{"node", "--", "x.js", "-"}, script: "x.js"},
	})
}
