package upstream

// The shells' option tables, by program name: their options differ (bash's
// -C is noclobber, fish's runs code; fish's -d takes a value, zsh's does
// not), so each is read with its own, and a command that may be several
// shells (sh as dash or bash) with each of theirs (findScript).

import (
	"fmt"
	"strings"
)

// shellOpts are the shells' tables; a shell without its own (yash) is read
// as POSIX sh.
var shellOpts = map[string]*optTable{
	"sh":   shOpts,
	"bash": bashOpts,
	"dash": dashOpts,
	"ash":  dashOpts,
	"ksh":  kshOpts,
	"mksh": mkshOpts,
	"zsh":  zshOpts,
	"fish": fishOpts,
	"csh":  cshOpts,
	"tcsh": cshOpts,
}

// shellCode are the options that make every shell read its commands from
// elsewhere than the script: -c (a command argument), -s (stdin, where
// clawd writes requests), -i (interactive).
var shellCode = []string{"-c", "-s", "-i"}

// loginShell refuses a login shell: it runs /etc/profile and the user's
// ~/.profile (~/.bash_profile, ~/.zprofile...) before the script, from a
// HOME the server's env may set.
var loginShell = map[string]string{
	"-l":      "`%s` makes the shell a login shell, which runs startup files (/etc/profile, ~/.profile...) before the script; drop it",
	"--login": "`%s` makes the shell a login shell, which runs startup files (/etc/profile, ~/.profile...) before the script; drop it",
}

// shellTable is a shell's table: its one-letter flags (letters), its
// options with a value, besides the ones every shell refuses.
func shellTable(name, letters string, withValue []string, more optTable) *optTable {
	t := more
	t.name, t.groups, t.plusOpts = name, lettersShell, true
	for _, c := range letters {
		t.flags = append(t.flags, "-"+string(c))
	}
	t.withValue = append(t.withValue, withValue...)
	t.foreignCode = append(t.foreignCode, shellCode...)
	if t.refused == nil {
		t.refused = loginShell
	}
	if t.checkValue == nil {
		t.checkValue = map[string]func(string) string{"-o": shellOptRefusal}
	}
	return &t
}

var (
	// POSIX sh: what every sh reads alike.
	shOpts = shellTable("sh", "abCefhmnuvx", []string{"-o"}, optTable{})
	// bash --help (5.2). --debugger (and shopt extdebug) runs the
	// debugger's profile before the script; --rcfile and --init-file are
	// read by interactive shells only (-i is refused).
	bashOpts = shellTable("bash", "abefhkmnptuvxBCEHPTrD", []string{"-o", "-O"}, optTable{
		flags: []string{"--debug", "--dump-po-strings", "--dump-strings", "--help", "--noediting", "--noprofile", "--norc",
			"--posix", "--pretty-print", "--restricted", "--verbose", "--version"},
		withValue:   []string{"--rcfile", "--init-file"},
		foreignCode: []string{"--debugger"},
		checkValue:  map[string]func(string) string{"-o": shellOptRefusal, "-O": bashShoptRefusal},
	})
	// dash(1) 0.5.12; busybox ash reads the same.
	dashOpts = shellTable("dash", "abCefhmnuvxIqVEp", []string{"-o"}, optTable{})
	// ksh93(1): -R FILE writes a cross-reference database; -E reads
	// $ENV or ~/.kshrc like an interactive shell.
	kshOpts = shellTable("ksh", "abefhkmnprtuvxBCDGH", []string{"-o", "-R"}, optTable{foreignCode: []string{"-E"}})
	// mksh(1) R59: -T TTY spawns on a tty.
	mkshOpts = shellTable("mksh", "abCefhkmnprUuvXx", []string{"-o", "-T"}, optTable{})
	// zsh(1) 5.9: every letter is an option (zshoptions, "Single letter
	// options"), and so is --NAME, checked like -o NAME (shinstdin and
	// interactive read commands from stdin, login is a login shell);
	// --emulate takes a value.
	zshOpts = shellTable("zsh", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZadefghjkmnprtuvwxy", []string{"-o"}, optTable{
		flags:      []string{"--version", "--help"},
		withValue:  []string{"--emulate"},
		anyLong:    true,
		checkValue: map[string]func(string) string{"-o": shellOptRefusal, "--": shellOptRefusal},
	})
	// fish(1) 3.7 (getopt: a value attached or the next argument, or
	// after "=" in a long option): -C/--init-command and -c/--command run
	// code given on the command line.
	fishOpts = &optTable{
		name: "fish",
		flags: []string{"-h", "--help", "-N", "--no-config", "-n", "--no-execute", "-P", "--private", "-v", "--version",
			"--print-rusage-self", "--print-debug-categories"},
		withValue: []string{"-d", "--debug", "-o", "--debug-output", "-f", "--features", "-p", "--profile",
			"--profile-startup", "-D", "--debug-stack-frames"},
		foreignCode: []string{"-c", "--command", "-C", "--init-command", "-i", "--interactive"},
		refused:     loginShell,
		longEq:      true,
	}
	// tcsh(1) 6.24 (csh reads a subset): -t reads one line from stdin
	// and runs it; -d loads the directory stack from ~/.cshdirs.
	cshOpts = shellTable("tcsh", "defFmnqvxVX", nil, optTable{
		flags:       []string{"--help", "--version"},
		foreignCode: []string{"-t"},
	})
)

// shellOptRefusal refuses the shell options (-o NAME, zsh's --NAME: case,
// "_" and "-" do not count) that make the shell read its commands from
// stdin, where clawd writes requests (shinstdin, and zsh's alias of it,
// stdin), run interactively, or as a login shell.
func shellOptRefusal(name string) string {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	switch n {
	case "shinstdin", "stdin", "interactive":
		return fmt.Sprintf("the shell option `%s` makes the shell read commands from its input (clawd's requests), which clawd cannot pin; drop it", name)
	case "login":
		return fmt.Sprintf("the shell option `%s` makes the shell a login shell, which runs startup files before the script; drop it", name)
	}
	return ""
}

// bashShoptRefusal refuses bash's -O extdebug: like --debugger, bash then
// runs the debugger's profile before the script.
func bashShoptRefusal(name string) string {
	if strings.TrimSpace(name) == "extdebug" {
		return "`-O extdebug` makes bash run its debugger's profile before the script, code clawd cannot pin; drop it"
	}
	return ""
}
