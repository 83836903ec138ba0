package upstream

import (
	"fmt"
	"slices"
	"strings"
)

// The rules for java, dotnet and Rscript, whose command lines findScript
// cannot read (a main class or an SDK command is not a file; Rscript takes
// any argument not starting with "--" for its file). The variables of a
// server's env that make a runtime load code from elsewhere are in
// launch_env.go.

// javaValueOpts are the java launcher's options whose value is the next
// argument (java.c's IsWhiteSpaceOption), less those refused below and
// --source, which javaTarget reads.
var javaValueOpts = []string{"-cp", "-classpath", "--class-path", "--add-modules", "--enable-native-access",
	"--limit-modules", "--add-exports", "--add-opens", "--add-reads", "-d", "--describe-module"}

// javaModuleOpts add modules from directories clawd does not pin: the
// module path (whose services the JDK binds and loads even for -jar),
// replacements of the JDK's own modules, and classes patched into them.
var javaModuleOpts = []string{"-p", "--module-path", "--upgrade-module-path", "--patch-module"}

// javaCodePrefixes are options that load code from elsewhere (agents,
// the boot class path, another VM, a class data archive, Java 8's
// extension directories, the VM's native libraries), read more options
// from a file, or run a command.
var javaCodePrefixes = []string{"-javaagent:", "-agentlib:", "-agentpath:", "-Xrun", "-Xbootclasspath",
	"-XXaltjvm=", "-XX:VMOptionsFile=", "-XX:Flags=", "-XX:SharedArchiveFile=", "-XX:AOTCache=",
	"-XX:OnError=", "-XX:OnOutOfMemoryError=",
	"-Djava.ext.dirs=", "-Djava.endorsed.dirs=", "-Dsun.boot.library.path="}

const javaFix = "package the server as a jar and run `java -jar FILE` (or a single source file, `java FILE.java`)"

// javaOptRefusal says why java option a runs code clawd cannot pin, or "".
func javaOptRefusal(a string) string {
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
	source := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if why := javaOptRefusal(a); why != "" {
			return "", why
		}
		name, _, hasValue := strings.Cut(a, "=")
		valueNext := slices.Contains(javaValueOpts, a) || (name == "--source" && !hasValue)
		source = source || name == "--source"
		switch {
		case a == "-jar" || valueNext:
			if i+1 == len(args) {
				break
			}
			i++
			if strings.HasPrefix(args[i], "@") {
				return "", javaOptRefusal(args[i])
			}
			if a == "-jar" {
				return args[i], ""
			}
		case strings.HasPrefix(a, "-"):
			// Stands alone: -Dk=v, -Xmx1g, -XX:..., -ea, --name=value.
		case source || strings.HasSuffix(a, ".java"):
			return a, ""
		default:
			return "", fmt.Sprintf("`%s` names a main class, loaded from the class path, which clawd cannot pin; %s", a, javaFix)
		}
	}
	return "", "java is given no file to run, so clawd cannot pin what it runs; " + javaFix
}

// dotnetHostOpts are the dotnet host's options (`dotnet [exec] [options]
// FILE.dll`) that take the next argument; dotnetCodeOpts add assemblies
// from elsewhere.
var (
	dotnetHostOpts = []string{"--depsfile", "--runtimeconfig", "--fx-version", "--roll-forward", "--roll-forward-on-no-candidate-fx"}
	dotnetCodeOpts = []string{"--additional-deps", "--additionalprobingpath"}
)

const dotnetFix = "publish the server (`dotnet publish`) and run `dotnet FILE.dll` or the published executable"

// dotnetTarget returns the application `dotnet ARGS` runs (FILE.dll or
// FILE.exe, after the host's options), or why there is none clawd can pin.
// Anything else is an SDK command, which builds or fetches code.
func dotnetTarget(args []string) (string, string) {
	i := 0
	if len(args) > 0 && args[0] == "exec" {
		i = 1
	}
	for ; i < len(args); i++ {
		a := args[i]
		lower := strings.ToLower(a)
		switch {
		case slices.Contains(dotnetHostOpts, a):
			i++
		case slices.Contains(dotnetCodeOpts, a):
			return "", fmt.Sprintf("`%s` makes dotnet load assemblies from elsewhere, which clawd cannot pin; drop it, publish the server with what it needs (`dotnet publish`) and run `dotnet FILE.dll`", a)
		case strings.HasPrefix(a, "-"):
			return "", fmt.Sprintf("`%s` is not a dotnet host option (with it dotnet runs an SDK command), so clawd cannot pin what runs; %s", a, dotnetFix)
		case strings.HasSuffix(lower, ".dll") || strings.HasSuffix(lower, ".exe"):
			return a, ""
		default:
			return "", fmt.Sprintf("`dotnet %s` runs an SDK command, which builds or fetches code clawd cannot pin; %s", a, dotnetFix)
		}
	}
	return "", "dotnet is given no application, so clawd cannot pin what it runs; " + dotnetFix
}

// rscriptForeign are the R options Rscript passes on that run other code:
// --restore loads .RData (whose .First runs), --args before the file hides
// it from R (which then reads stdin), --file names another file, and
// --debugger runs R under the program it names.
var rscriptForeign = []string{"--restore", "--args", "--file", "--debugger"}

// rscriptTarget returns the file `Rscript ARGS` runs, or why there is none
// clawd can pin. Rscript reads its options as Rscript.c does: -e, and
// arguments starting with "--" (with "=value", never a separate value;
// a first argument starting with "--" is split at blanks, as for a #!
// line); the first other argument is the file.
func rscriptTarget(args []string) (string, string) {
	if len(args) > 0 && strings.HasPrefix(args[0], "--") {
		args = append(strings.Fields(args[0]), args[1:]...)
	}
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		switch {
		case a == "-e" || slices.Contains(rscriptForeign, name):
			return "", foreignCodeMsg(a)
		case strings.HasPrefix(a, "--"):
		case a == "-":
			return "", "`-` makes R read its code from stdin, which clawd cannot pin; name the script file"
		default:
			return a, ""
		}
	}
	return "", "the interpreter is given no script file, so clawd cannot pin what it runs; name the script in the command"
}
