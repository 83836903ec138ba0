package upstream

// How an interpreter's arguments are read to find the script it runs, and
// which of its options are refused because they make it run other code
// (the rules are listed on Launch). One table per runtime (launch_opts.go)
// decides everything: the same reader reads the command line, up to the
// script, and the runtime's option variables (NODE_OPTIONS, RUBYOPT...,
// launch_env.go), which hold options only.

import (
	"fmt"
	"slices"
	"strings"
)

// groupStyle is how a runtime reads an argument of one-letter options.
type groupStyle int

const (
	// lettersAttached: letters group (-we); one that takes a value takes
	// the rest of the group, or the next argument at its end (getopt).
	lettersAttached groupStyle = iota
	// lettersShell: letters group; one that takes a value must end its
	// group and takes the next argument. Shells differ on -oNAME (zsh,
	// ksh and mksh read NAME as the value, bash and dash as more letters),
	// so such a group is refused.
	lettersShell
	// wholeWord: no groups: the argument is one option (java -jar, node
	// -pe), or a name with its value attached (lua -O3, java -Xmx1g).
	wholeWord
)

// optTable is how a runtime reads its options. An option in none of its
// lists is refused: clawd cannot tell whether the runtime takes the
// argument after it as its value, and so which argument is the script
// (or, in an option variable, which word is an option).
type optTable struct {
	name   string // the runtime, for messages
	groups groupStyle
	// flags take no value.
	flags []string
	// flagPrefixes are options whose value, if any, is attached to their
	// name (java -Dk=v and -Xmx1g, ruby --enable-FEATURE).
	flagPrefixes []string
	// withValue take a value: attached as groups allows, or after "=" in
	// a long option, else the next argument.
	withValue []string
	// optValue take the next argument as their value only when it does
	// not start with "-" (an optional value: deno's --lock).
	optValue []string
	// eqOnly take a value only after "=", and it must not be empty
	// (Rscript's --encoding=ENC: R would take the next argument).
	eqOnly []string
	// restValue are one-letter options whose optional value is only ever
	// the rest of the group (perl -i.bak, -CSDA, -xDIR): never the next
	// argument, and not read as more options.
	restValue []string
	// digitValue are one-letter options whose value is the octal digits
	// after them (with hexDigits, or x and hex digits); the group goes on
	// after those (perl -l0ne is -l0 -n -e).
	digitValue []string
	hexDigits  bool
	// scriptValue take the script as their value (php -f FILE, java -jar);
	// with scriptEnds the options end with it (java's), else the runtime
	// reads more options after it (php's).
	scriptValue []string
	scriptEnds  bool
	// foreignCode make the runtime run code other than the script file,
	// or look the file up elsewhere than where clawd pinned it: refused.
	// With wholeWord, a one-letter one is refused with a value attached
	// too (lua -lsocket).
	foreignCode []string
	// foreignPrefixes: an option whose name starts with one is refused as
	// foreignCode (ruby --crash-report-...).
	foreignPrefixes []string
	// refused are options refused for another reason: a message with %s
	// for the option.
	refused map[string]string
	// checkValue says, per option with a value, why that value makes the
	// runtime run code clawd cannot pin, or "".
	checkValue map[string]func(v string) string
	// wordCheck says why an option argument, or a value, makes the runtime
	// run code clawd cannot pin, or "" (java's refusals are prefixes).
	wordCheck func(a string) string
	// longEq: "--name=VALUE" is one option with its value, whatever the
	// name (an unknown one takes nothing more).
	longEq bool
	// shortEq: the runtime drops an "=" between a letter and its attached
	// value (php -d=KEY is -d KEY).
	shortEq bool
	// clapEq: in a group, "=" after a letter starts its value (deno
	// -R=/tmp).
	clapEq bool
	// negatable: --no-NAME is the flag --NAME negated, and --NAME a listed
	// --no-NAME's opposite (node's and V8's booleans).
	negatable bool
	// anyLong: every --NAME is a flag (zsh's option names), its name
	// checked by checkValue["--"].
	anyLong bool
	// plusOpts: "+x" and "+o NAME" (shells: unset an option).
	plusOpts bool
	// blankSwitches: a blank inside an argument ends its option, and
	// perl reads more options after it (-i.bak -MEvil).
	blankSwitches bool
	// bareWords: in an option variable a word not starting with "-" is
	// options too, as if it did (PERL5OPT, RUBYOPT).
	bareWords bool
	// noDashDash: "--" ends no options; it is read as an option.
	noDashDash bool
	// endStdin: "--" before any script makes the runtime read its code
	// from stdin (php).
	endStdin bool
	// isOption, when set, says which arguments are options (Rscript reads
	// only those starting with "--", and -e).
	isOption func(a string) bool
	// spell is an argument as the runtime reads it (node's "_" in a long
	// name is "-").
	spell func(a string) string
	// unknown, when set, is the refusal of an option not in the table.
	unknown func(a string) string
	// lateRefused are flags that make the runtime run other files than
	// the script (node --test): refused once the options are read, so an
	// option refused for its own sake is the one named.
	lateRefused []string
}

// optRead is one option argument as read: the option that takes a value
// and that value when attached, or whether the value is the next argument
// (optional: unless that starts with "-").
type optRead struct {
	opt      string
	value    string
	hasValue bool
	next     bool
	optional bool
}

// scan reads args as t's runtime reads its options. Unless words (an
// option variable's words: options only, none a script), it stops at the
// first argument that is not an option, whose index it returns (len(args)
// when there is none); script is set when an option names the script (php
// -f FILE). why says why the options are refused.
func (t *optTable) scan(args []string, words bool) (operand int, script, why string) {
	late := ""
	end := func(operand int, script string) (int, string, string) {
		if late != "" {
			return operand, "", foreignCodeMsg(late)
		}
		return operand, script, ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if words && t.bareWords && a != "" && !strings.HasPrefix(a, "-") {
			a = "-" + a
		}
		if a == "--" && !t.noDashDash {
			switch {
			case words:
				continue
			case t.endStdin && script == "":
				return i, "", fmt.Sprintf("`--` with no script before it makes %s read its code from stdin (where clawd writes requests), which clawd cannot pin; name the script before `--`", t.name)
			case script == "" && i+1 < len(args) && args[i+1] == "-":
				// The runtimes read "-" as stdin after "--" too (lua
				// alone as a file named "-": refused all the same).
				return i + 1, "", stdinMsg(t)
			}
			return end(i+1, script)
		}
		if !t.option(a) {
			if words {
				continue
			}
			return end(i, script)
		}
		r, why := t.read(a)
		if why != "" {
			return i, "", why
		}
		if late == "" && len(t.lateRefused) > 0 {
			name := a
			if t.spell != nil {
				name = t.spell(a)
			}
			if slices.Contains(t.lateRefused, name) {
				late = a
			}
		}
		if r.next && i+1 < len(args) {
			v := args[i+1]
			switch {
			case !strings.HasPrefix(v, "-"):
				i++
				r.value, r.hasValue = v, true
			case !r.optional:
				return i, "", dashValueMsg(t, a, r.opt, v)
			}
		}
		if !r.hasValue {
			continue
		}
		if t.wordCheck != nil {
			if why := t.wordCheck(r.value); why != "" {
				return i, "", why
			}
		}
		if check := t.checkValue[r.opt]; check != nil {
			if why := check(r.value); why != "" {
				return i, "", why
			}
		}
		if !words && slices.Contains(t.scriptValue, r.opt) {
			if t.scriptEnds {
				return end(i, r.value)
			}
			script = r.value
		}
	}
	return end(len(args), script)
}

// option reports whether argument a is an option to t's runtime.
func (t *optTable) option(a string) bool {
	if t.isOption != nil {
		return t.isOption(a)
	}
	return strings.HasPrefix(a, "-") || (t.plusOpts && len(a) > 1 && a[0] == '+')
}

// read reads the option argument a.
func (t *optTable) read(a string) (optRead, string) {
	s := a
	if t.spell != nil {
		s = t.spell(a)
	}
	if s == "-" {
		return optRead{}, stdinMsg(t)
	}
	if t.blankSwitches && strings.ContainsAny(s, " \t\n\r") {
		return optRead{}, fmt.Sprintf("`%s` puts more options after a blank inside one argument, which %s reads and clawd does not; give each option as an argument of its own", a, t.name)
	}
	if t.wordCheck != nil {
		if why := t.wordCheck(a); why != "" {
			return optRead{}, why
		}
	}
	switch {
	case strings.HasPrefix(s, "--"):
		return t.readLong(a, s)
	case t.groups == wholeWord:
		return t.readWord(a, s)
	}
	return t.readGroup(a, s)
}

// readLong reads a long option, a as given and s as the runtime spells it.
func (t *optTable) readLong(a, s string) (optRead, string) {
	name, value, eq := s, "", false
	if t.longEq {
		name, value, eq = strings.Cut(s, "=")
	}
	if why := t.refusal(a, name); why != "" {
		return optRead{}, why
	}
	switch {
	case slices.Contains(t.eqOnly, name):
		if !eq || value == "" {
			return optRead{}, fmt.Sprintf("`%s` takes the argument after it as its value when given none after \"=\", so clawd cannot tell which file %s runs; give it as `%s=VALUE`", a, t.name, name)
		}
		return optRead{opt: name, value: value, hasValue: true}, ""
	case eq:
		return optRead{opt: name, value: value, hasValue: true}, ""
	case t.isFlag(name):
		return optRead{}, ""
	case slices.Contains(t.withValue, name) || slices.Contains(t.scriptValue, name):
		return optRead{opt: name, next: true}, ""
	case slices.Contains(t.optValue, name):
		return optRead{opt: name, next: true, optional: true}, ""
	case t.anyLong:
		return optRead{opt: "--", value: name[2:], hasValue: true}, ""
	}
	return optRead{}, t.unknownMsg(a, name, true)
}

// readWord reads an option that is one word (wholeWord).
func (t *optTable) readWord(a, s string) (optRead, string) {
	if why := t.refusal(a, s); why != "" {
		return optRead{}, why
	}
	switch {
	case t.isFlag(s):
		return optRead{}, ""
	case slices.Contains(t.withValue, s) || slices.Contains(t.scriptValue, s):
		return optRead{opt: s, next: true}, ""
	case slices.Contains(t.optValue, s):
		return optRead{opt: s, next: true, optional: true}, ""
	}
	if len(s) > 2 {
		o, rest := s[:2], s[2:]
		switch {
		case slices.Contains(t.foreignCode, o):
			return optRead{}, foreignCodeMsg(a)
		case slices.Contains(t.restValue, o), slices.Contains(t.withValue, o), slices.Contains(t.scriptValue, o):
			return optRead{opt: o, value: rest, hasValue: true}, ""
		}
	}
	return optRead{}, t.unknownMsg(a, s, false)
}

// readGroup reads a group of one-letter options ("-Im", "-we", "-uW"),
// letter by letter until one takes a value.
func (t *optTable) readGroup(a, s string) (optRead, string) {
	for i := 1; i < len(s); i++ {
		o, rest := "-"+s[i:i+1], s[i+1:]
		if why := t.refusal(a, o); why != "" {
			return optRead{}, why
		}
		switch {
		case slices.Contains(t.restValue, o):
			return optRead{opt: o, value: rest, hasValue: true}, ""
		case slices.Contains(t.digitValue, o):
			i += digitsAt(rest, t.hexDigits)
		case slices.Contains(t.withValue, o) || slices.Contains(t.scriptValue, o):
			switch {
			case rest == "":
				return optRead{opt: o, next: true}, ""
			case t.groups == lettersShell:
				return optRead{}, fmt.Sprintf("`%s` puts more after %s, which some shells read as its value and others as more options; give `%s NAME` as an argument of its own", a, o, o)
			case t.shortEq || t.clapEq:
				rest = strings.TrimPrefix(rest, "=")
			}
			return optRead{opt: o, value: rest, hasValue: true}, ""
		case t.isFlag(o):
			if t.clapEq && strings.HasPrefix(rest, "=") {
				return optRead{opt: o, value: rest[1:], hasValue: true}, ""
			}
		default:
			return optRead{}, t.unknownMsg(a, o, false)
		}
	}
	return optRead{}, ""
}

// refusal says why option name (from argument a) is refused, or "".
func (t *optTable) refusal(a, name string) string {
	if slices.Contains(t.foreignCode, name) || slices.ContainsFunc(t.foreignPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
		return foreignCodeMsg(a)
	}
	if msg, ok := t.refused[name]; ok {
		return fmt.Sprintf(msg, a)
	}
	return ""
}

// isFlag reports whether option name takes no separate value.
func (t *optTable) isFlag(name string) bool {
	if slices.Contains(t.flags, name) || slices.ContainsFunc(t.flagPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
		return true
	}
	if t.negatable && strings.HasPrefix(name, "--") {
		if rest, ok := strings.CutPrefix(name, "--no-"); ok && slices.Contains(t.flags, "--"+rest) {
			return true
		}
		return slices.Contains(t.flags, "--no-"+name[2:])
	}
	return false
}

// unknownMsg refuses option opt (in argument a), not in t.
func (t *optTable) unknownMsg(a, opt string, long bool) string {
	if t.unknown != nil {
		return t.unknown(a)
	}
	in := ""
	if opt != a {
		in = fmt.Sprintf(" (in `%s`)", a)
	}
	fix := "drop it"
	if long && t.longEq {
		fix = fmt.Sprintf("if it takes a value, give it as `%s=VALUE`; else drop it", opt)
	}
	return fmt.Sprintf("`%s`%s is not an option clawd knows for %s, so it cannot tell how %s reads the arguments after it (whether the next one is its value or the script); %s", opt, in, t.name, t.name, fix)
}

// stdinMsg refuses "-" as the script: t's runtime reads its code from
// stdin, where clawd writes requests.
func stdinMsg(t *optTable) string {
	return fmt.Sprintf("`-` makes %s read its code from stdin (where clawd writes requests), which clawd cannot pin; name the script file", t.name)
}

// dashValueMsg refuses option argument a (option opt) followed by v, which
// starts with "-": a runtime may take it as the value or as an option.
func dashValueMsg(t *optTable, a, opt, v string) string {
	fix := "give it a value that does not start with \"-\""
	switch {
	case strings.HasPrefix(opt, "--") && t.longEq:
		fix = fmt.Sprintf("give it as `%s=VALUE`", opt)
	case !strings.HasPrefix(opt, "--") && t.groups == lettersAttached:
		fix = fmt.Sprintf("attach the value (`%sVALUE`)", opt)
	}
	return fmt.Sprintf("`%s` is followed by `%s`, which %s may read as its value or as another option, so clawd cannot tell which file runs; %s", a, v, t.name, fix)
}

// findScript returns the script argument of an interpreter's arguments, or
// why there is none clawd can pin. The options before it are read with the
// runtime's table; for a shell, with the table of each shell the command
// may be (names: its configured and resolved names, sh being dash or
// bash), which must all read the same script.
func findScript(kind string, args []string, names ...string) (string, string) {
	script := ""
	for i, t := range optTables(kind, names) {
		operand, s, why := t.scan(args, false)
		switch {
		case why != "":
			return "", why
		case s == "" && operand < len(args):
			s = args[operand]
		case s == "":
			return "", "the interpreter is given no script file, so clawd cannot pin what it runs; name the script in the command"
		}
		if i > 0 && s != script {
			return "", fmt.Sprintf("the shells this command may be read its options differently (`%s` or `%s` would run), so clawd cannot tell which file runs; give the options in a form every shell reads alike", script, s)
		}
		script = s
	}
	return script, ""
}

// optTables are the tables to read a command of kind with: the kind's, or
// for a shell those of the shells names name (the POSIX sh table for a
// shell without its own).
func optTables(kind string, names []string) []*optTable {
	if kind != "shell" {
		return []*optTable{interpreterOpts[kind]}
	}
	var ts []*optTable
	for _, n := range names {
		if launcherKind(n) != "shell" {
			continue
		}
		t := shellOpts[plainName(n)]
		if t == nil {
			t = shellOpts["sh"]
		}
		if !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		ts = append(ts, shellOpts["sh"])
	}
	return ts
}

// optionsRefusal says why the words of an option variable of runtime kind
// (split as optionWords splits them) make it run code clawd cannot pin, or
// "": they are read as options only, with the command line's table.
func optionsRefusal(kind string, words []string) string {
	_, _, why := interpreterOpts[kind].scan(words, true)
	return why
}

// foreignCodeMsg says that option a makes the interpreter run code other
// than the script file.
func foreignCodeMsg(a string) string {
	if strings.HasPrefix(nodeSpelling(a), "--inspect") {
		return fmt.Sprintf("`%s` opens a debugger port through which any local process (any host, given another address) can run code in the server, which clawd cannot pin; drop it", a)
	}
	return fmt.Sprintf("`%s` makes the interpreter run code other than the script file (or the file again once it changes), which clawd cannot pin; drop it, and put code to run in a file given as the script", a)
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
