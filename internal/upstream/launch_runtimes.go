package upstream

import (
	"fmt"
	"slices"
	"strings"
)

// The rules for java, dotnet and Rscript, whose command lines name no
// script the way the other interpreters' do (a main class or an SDK
// command is not a file; Rscript takes any argument not starting with "--"
// for its file): their options are read with their tables by the same
// reader (launch_script.go), and what follows them decides. The variables
// of a server's env that make a runtime load code from elsewhere are in
// launch_env_rules.go.

// javaValueOpts are the java launcher's options whose value is the next
// argument (the launcher's list of them, JDK 25), less those refused below.
var javaValueOpts = []string{"-cp", "-classpath", "--class-path", "--add-modules", "--enable-native-access",
	"--limit-modules", "--add-exports", "--add-opens", "--add-reads", "-d", "--describe-module", "--source"}

// javaModuleOpts add modules from directories clawd does not pin: the
// module path (whose services the JDK binds and loads even for -jar),
// replacements of the JDK's own modules, and classes patched into them.
var javaModuleOpts = []string{"-p", "--module-path", "--upgrade-module-path", "--patch-module"}

// javaCodePrefixes are options that load code from elsewhere (agents, the
// boot class path, another VM, a class data archive or checkpoint, a JVMCI
// compiler library or class path, Java 8's extension directories, the
// VM's native libraries), read more options from a file, run a command,
// or start the management agent, whose JMX connector (com.sun.management.
// jmxremote.*, or a config.file that sets it) lets a client load classes.
var javaCodePrefixes = []string{"-javaagent:", "-agentlib:", "-agentpath:", "-Xrun", "-Xbootclasspath",
	"-XXaltjvm=", "-XX:VMOptionsFile=", "-XX:Flags=", "-XX:SharedArchiveFile=", "-XX:AOTCache=", "-XX:CRaCRestoreFrom=",
	"-XX:JVMCILibPath=", "-Djvmci.class.path.append=", "-XX:OnError=", "-XX:OnOutOfMemoryError=",
	"-Djava.ext.dirs=", "-Djava.endorsed.dirs=", "-Dsun.boot.library.path=",
	"-Dcom.sun.management.", "-XX:+ManagementServer"}

const javaFix = "package the server as a jar and run `java -jar FILE` (or a single source file, `java FILE.java`)"

// javaOpts: `java -help` and `java -X` (JDK 21 to 25). The launcher takes
// the next argument as the value of the options in javaValueOpts and hands
// every other option, one word, to the JVM: -D, -X and -XX: options with
// their values attached, the assertion switches, -verbose:..., -splash:...
// A long option it does not list may be a newer one with a separate value,
// and is refused unless given as --name=value. -XX:+EnableDynamicAgentLoading
// passes: it lets a process of the same user attach an agent, which such a
// process can do by other means anyway (a documented limit).
var javaOpts = &optTable{
	name:   "java",
	groups: wholeWord,
	flags: []string{"-version", "-showversion", "-fullversion", "-help", "-h", "-?", "-server", "-client", "-disable-@files",
		"--version", "--show-version", "--full-version", "--help", "--help-extra", "--dry-run", "--validate-modules",
		"--list-modules", "--show-module-resolution", "--enable-preview", "--disable-@files"},
	flagPrefixes: []string{"-D", "-X", "-verbose", "-ea", "-da", "-esa", "-dsa", "-enableassertions", "-disableassertions",
		"-enablesystemassertions", "-disablesystemassertions", "-splash:"},
	withValue:   javaValueOpts,
	scriptValue: []string{"-jar"},
	scriptEnds:  true,
	wordCheck:   javaCodeRefusal,
	longEq:      true,
	noDashDash:  true,
	isOption:    func(a string) bool { return strings.HasPrefix(a, "-") || strings.HasPrefix(a, "@") },
}

// javaCodeRefusal says why java option (or option value) a runs code
// clawd cannot pin, or "".
func javaCodeRefusal(a string) string {
	name, _, _ := strings.Cut(a, "=")
	switch {
	case strings.HasPrefix(a, "@"):
		return fmt.Sprintf("`%s` is an argument file, whose options may load code clawd cannot pin; put the options in the command", a)
	case a == "-m" || name == "--module":
		return fmt.Sprintf("`%s` runs a main class from the module path, which clawd cannot pin; %s", a, javaFix)
	case slices.Contains(javaModuleOpts, name):
		return fmt.Sprintf("`%s` makes java load modules from directories clawd cannot pin; drop it and package what the server needs in its jar (`java -jar FILE`)", a)
	}
	for _, p := range javaCodePrefixes {
		if strings.HasPrefix(a, p) {
			return fmt.Sprintf("`%s` makes java load code (or run a command) from elsewhere, which clawd cannot pin; drop it", a)
		}
	}
	return ""
}

// javaTarget returns the file `java ARGS` runs, the jar of -jar FILE or
// the source file of source-file mode (FILE.java, or any file after
// --source), or why there is none clawd can pin. Everything after it is
// the program's, not java's.
func javaTarget(args []string) (string, string) {
	operand, jar, why := javaOpts.scan(args, false)
	switch {
	case why != "":
		return "", why
	case jar != "":
		return jar, ""
	case operand == len(args):
		return "", "java is given no file to run, so clawd cannot pin what it runs; " + javaFix
	}
	a := args[operand]
	source := slices.ContainsFunc(args[:operand], func(o string) bool {
		name, _, _ := strings.Cut(o, "=")
		return name == "--source"
	})
	if source || strings.HasSuffix(a, ".java") {
		return a, ""
	}
	return "", fmt.Sprintf("`%s` names a main class, loaded from the class path, which clawd cannot pin; %s", a, javaFix)
}

const dotnetFix = "publish the server (`dotnet publish`) and run `dotnet FILE.dll` or the published executable"

// dotnetOpts: the dotnet host's options before FILE.dll (`dotnet [exec]
// [options] FILE.dll`), each with a value as the next argument;
// --additional-deps and --additionalprobingpath add assemblies from
// elsewhere. Any other option makes dotnet run an SDK command.
var dotnetOpts = &optTable{
	name:      "dotnet",
	groups:    wholeWord,
	withValue: []string{"--depsfile", "--runtimeconfig", "--fx-version", "--roll-forward", "--roll-forward-on-no-candidate-fx"},
	refused: map[string]string{
		"--additional-deps":       "`%s` makes dotnet load assemblies from elsewhere, which clawd cannot pin; drop it, publish the server with what it needs (`dotnet publish`) and run `dotnet FILE.dll`",
		"--additionalprobingpath": "`%s` makes dotnet load assemblies from elsewhere, which clawd cannot pin; drop it, publish the server with what it needs (`dotnet publish`) and run `dotnet FILE.dll`",
	},
	noDashDash: true,
	unknown: func(a string) string {
		return fmt.Sprintf("`%s` is not a dotnet host option (with it dotnet runs an SDK command), so clawd cannot pin what runs; %s", a, dotnetFix)
	},
}

// dotnetTarget returns the application `dotnet ARGS` runs (FILE.dll or
// FILE.exe, after the host's options), or why there is none clawd can pin.
// Anything else is an SDK command, which builds or fetches code.
func dotnetTarget(args []string) (string, string) {
	if len(args) > 0 && args[0] == "exec" {
		args = args[1:]
	}
	operand, _, why := dotnetOpts.scan(args, false)
	switch {
	case why != "":
		return "", why
	case operand == len(args):
		return "", "dotnet is given no application, so clawd cannot pin what it runs; " + dotnetFix
	}
	a := args[operand]
	if lower := strings.ToLower(a); strings.HasSuffix(lower, ".dll") || strings.HasSuffix(lower, ".exe") {
		return a, ""
	}
	return "", fmt.Sprintf("`dotnet %s` runs an SDK command, which builds or fetches code clawd cannot pin; %s", a, dotnetFix)
}

// rscriptOpts: Rscript (R 4.5) passes every argument starting with "--"
// before the file to R, then --file=FILE; its only other option is -e.
// R's front end (the `R` shell script) and R itself then read them:
// --encoding, --min-nsize, --min-vsize, --max-ppsize and --gui without a
// value after "=" take the next argument, --file=FILE, and R reads its code
// from stdin; --arch=NAME makes the front end source etc/NAME/ldpaths;
// --interactive, --args before the file and --file make R read other code;
// --restore loads .RData (whose .First runs); --debugger runs R under the
// program it names. The front end splits the options at blanks and
// expands wildcards in them.
var rscriptOpts = &optTable{
	name:   "Rscript",
	groups: wholeWord,
	flags: []string{"--verbose", "--version", "--help", "--save", "--no-save", "--no-environ", "--no-site-file",
		"--no-init-file", "--no-restore", "--no-restore-data", "--no-restore-history", "--vanilla", "--no-readline",
		"--quiet", "--silent", "--slave", "--no-echo", "--debug-init"},
	eqOnly:      []string{"--default-packages", "--encoding", "--min-nsize", "--min-vsize", "--max-ppsize", "--max-connections", "--gui"},
	foreignCode: []string{"-e", "--restore", "--args", "--file", "--debugger", "--debugger-args", "--arch", "--interactive"},
	wordCheck:   rOptionRefusal,
	longEq:      true,
	noDashDash:  true,
	isOption: func(a string) bool {
		return strings.HasPrefix(a, "--") || a == "-e" || a == "-"
	},
}

// rShellChars are what R's front end, a shell script, splits at or expands
// in the options (and the file) Rscript hands it.
const rShellChars = " \t\n\r\v\f*?["

// rOptionRefusal refuses an R option with a blank or a wildcard in it.
func rOptionRefusal(a string) string {
	if strings.ContainsAny(a, rShellChars) {
		return fmt.Sprintf("`%s` has a blank or a wildcard, at which R's front end splits it into more options or which it expands, unchecked; give each option as an argument of its own, without wildcards", a)
	}
	return ""
}

// rscriptTarget returns the file `Rscript ARGS` runs, or why there is none
// clawd can pin. A first argument starting with "--" is split at blanks,
// as Rscript splits a #! line's.
func rscriptTarget(args []string) (string, string) {
	if len(args) > 0 && strings.HasPrefix(args[0], "--") {
		args = append(strings.Fields(args[0]), args[1:]...)
	}
	operand, _, why := rscriptOpts.scan(args, false)
	switch {
	case why != "":
		return "", why
	case operand == len(args):
		return "", "the interpreter is given no script file, so clawd cannot pin what it runs; name the script in the command"
	}
	file := args[operand]
	if strings.ContainsAny(file, "\t\n\r\v\f*?[") {
		return "", fmt.Sprintf("the file name %q has a tab, a line break or a wildcard, which R's front end splits at or expands, so another file could run; rename the script", file)
	}
	return file, ""
}
