package upstream

// How an interpreter's arguments are read to find the script it runs, and
// which of its options are refused because they make it run other code
// (the rules are listed on Launch).

import (
	"fmt"
	"slices"
	"strings"
)

// optTable is how an interpreter reads its options before the script.
type optTable struct {
	// withValue take a value: the rest of a one-letter group ("-Idir"),
	// else the next argument.
	withValue []string
	// restValue are one-letter options whose optional value is only ever
	// the rest of the group (perl -i.bak, -CSDA, -xDIR): never the next
	// argument, and not read as more options.
	restValue []string
	// digitValue are one-letter options whose value is the octal digits
	// after them (with hexDigits, or x and hex digits); the group goes on
	// after those (perl -l0ne is -l0 -n -e).
	digitValue []string
	hexDigits  bool
	// scriptValue take the script as their value (php -f FILE).
	scriptValue []string
	// foreignCode make the interpreter run code other than the script
	// file, or look the file up elsewhere than where clawd pinned it:
	// refused.
	foreignCode []string
	// checkValue says, per option with a value, why that value makes the
	// interpreter run code clawd cannot pin, or "".
	checkValue map[string]func(v string) string
}

// findScript returns the script argument of an interpreter's arguments, or
// why there is none clawd can pin. Options in --name=value form are
// skipped; the known value options skip their value; an option that runs
// other code is refused, and so is a value its check refuses. An unknown
// option without "=" is taken to stand alone; if it in fact takes a value,
// the value is taken for the script, which then either does not exist
// (refused) or is a file the approval names, so the user sees it.
func findScript(kind string, args []string) (string, string) {
	opts := interpreterOpts[kind]
	for i := 0; i < len(args); i++ {
		orig, a := args[i], args[i]
		if kind == "node" {
			a = nodeSpelling(a)
		}
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1], ""
			}
			break
		}
		if a == "-" || slices.Contains(opts.foreignCode, a) {
			return "", foreignCodeMsg(orig)
		}
		if kind == "shell" && strings.HasPrefix(a, "--") {
			if why := shellOptRefusal(a[2:]); why != "" { // zsh: --NAME sets option NAME
				return "", why
			}
		}
		// opt takes value (attached), or the next argument when next.
		opt, value, next := "", "", false
		switch {
		case len(a) > 2 && a[0] == '-' && a[1] != '-':
			var code bool
			code, opt, value, next = shortCluster(a, opts, kind != "shell")
			if code {
				return "", foreignCodeMsg(orig)
			}
			if slices.Contains(opts.restValue, opt) && strings.ContainsAny(value, " \t\n") {
				// perl reads more options after a blank in such a value
				// (-i.bak -MEvil); none needs one.
				return "", fmt.Sprintf("`%s` puts more options after a blank inside one argument, which clawd does not read; give each option as an argument of its own", orig)
			}
		case !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+"):
			return a, ""
		case strings.Contains(a, "="):
			opt, value, _ = strings.Cut(a, "=")
			if slices.Contains(opts.foreignCode, opt) {
				return "", foreignCodeMsg(orig)
			}
		case slices.Contains(opts.withValue, a) || slices.Contains(opts.scriptValue, a):
			opt, next = a, true
		default:
			opt = a // an option alone: -x
		}
		if next {
			if i+1 == len(args) {
				break
			}
			i++
			value = args[i]
		}
		if slices.Contains(opts.scriptValue, opt) {
			return value, ""
		}
		if check := opts.checkValue[opt]; check != nil {
			if why := check(value); why != "" {
				return "", why
			}
		}
	}
	return "", "the interpreter is given no script file, so clawd cannot pin what it runs; name the script in the command"
}

// foreignCodeMsg says that option a makes the interpreter run code other
// than the script file.
func foreignCodeMsg(a string) string {
	if strings.HasPrefix(nodeSpelling(a), "--inspect") {
		return fmt.Sprintf("`%s` opens a debugger port through which any local process (any host, given another address) can run code in the server, which clawd cannot pin; drop it", a)
	}
	return fmt.Sprintf("`%s` makes the interpreter run code other than the script file (or the file again once it changes), which clawd cannot pin; drop it, and put code to run in a file given as the script", a)
}

// shortCluster reads a group of one-letter options ("-Im", "-we", "-uW"),
// as the interpreters do: letter by letter until one takes a value, which
// is the rest of the group (attached) or, at its end and unless the option
// is a restValue one, the next argument. A shell's options never take an
// attached value: every letter counts, and one that takes a value takes
// the next argument. It reports whether a letter makes the interpreter run
// other code, else the option that took a value, the value when attached,
// and whether the value is the next argument.
func shortCluster(a string, t optTable, attached bool) (runsCode bool, opt, value string, valueNext bool) {
	for i := 1; i < len(a); i++ {
		o := "-" + a[i:i+1]
		switch {
		case slices.Contains(t.foreignCode, o):
			return true, "", "", false
		case !attached:
			if slices.Contains(t.withValue, o) {
				opt, valueNext = o, true
			}
		case slices.Contains(t.restValue, o):
			return false, o, a[i+1:], false
		case slices.Contains(t.digitValue, o):
			i += digitsAt(a[i+1:], t.hexDigits)
		case slices.Contains(t.withValue, o) || slices.Contains(t.scriptValue, o):
			if i == len(a)-1 {
				return false, o, "", true
			}
			return false, o, a[i+1:], false
		case t.checkValue[o] != nil:
			// An option alone whose attached value is checked (ruby -xDIR).
			return false, o, a[i+1:], false
		}
	}
	return false, opt, "", valueNext
}

// digitsAt is the length of the octal number (with hex, or x and a hex
// number) s starts with. ruby's -0 takes no x: -0xDIR is -0 -xDIR.
func digitsAt(s string, hex bool) int {
	n, digits := 0, "01234567"
	if hex && (strings.HasPrefix(s, "x") || strings.HasPrefix(s, "X")) {
		n, digits = 1, "0123456789abcdefABCDEF"
	}
	for n < len(s) && strings.IndexByte(digits, s[n]) >= 0 {
		n++
	}
	return n
}
