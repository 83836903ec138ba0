package upstream

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// envRuleKeys are the envRules keys for a command of the given rule kind,
// named (configured command, resolved executable) names: npx is npm, which
// runs node; a shell takes the rules of both names (`sh` may be bash, a
// link named otherwise may be zsh).
func envRuleKeys(kind string, names ...string) []string {
	switch kind {
	case "npx":
		return []string{"node", "npx"}
	case "shell":
		var keys []string
		for _, n := range names {
			if n = plainName(n); launcherKind(n) == kind && !slices.Contains(keys, n) {
				keys = append(keys, n)
			}
		}
		return keys
	}
	return []string{kind}
}

// envProgram is a program clawd recognises in a server's command: the
// command itself, or an interpreter its #! line names. kind is its rule
// kind ("" for a plain executable), name how messages name it, names its
// program names (see envRuleKeys).
type envProgram struct {
	kind, name string
	names      []string
}

// keys are the envRules keys of p.
func (p envProgram) keys() []string { return envRuleKeys(p.kind, p.names...) }

// envRefusal says why the server's env makes the command named cmd, whose
// programs clawd recognises are progs (the command's own first), run code
// clawd cannot pin, or "": the rules for every program (everyProgram),
// then those of each program in progs (envRules). Only env, the server's
// own variables, is read.
func envRefusal(env map[string]string, cmd string, progs []envProgram) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	check := func(r envRule, prog string, known bool) string {
		if r.unless != "" && r.turnedOff(envValue(env, r.unless)) {
			return ""
		}
		for _, k := range keys {
			if v := env[k]; r.matches(k) {
				if why := r.refusal(k, v, prog, known); why != "" {
					return why
				}
			}
		}
		return ""
	}
	for _, r := range everyProgram {
		prog, known := r.readerIn(cmd, progs)
		if why := check(r, prog, known); why != "" {
			return why
		}
	}
	for _, p := range progs {
		for _, rk := range p.keys() {
			for _, r := range envRules[rk] {
				if why := check(r, p.name, true); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// readerIn is how a refusal of rule r names the program that reads the
// variable, for the command named cmd whose programs clawd recognises are
// progs: a rule of every program's names the command; a runtime's rule
// the program of progs clawd recognises as that runtime, else the runtime
// "if cmd starts it" (known false).
func (r envRule) readerIn(cmd string, progs []envProgram) (string, bool) {
	if r.reader == "" {
		return cmd, true
	}
	for _, p := range progs {
		for _, k := range p.keys() {
			if slices.Contains(r.progs, k) {
				return p.name, true
			}
		}
	}
	return r.reader + ", if " + cmd + " starts it,", false
}

// refusal says why variable k set to v makes prog (see readerIn) run code
// clawd cannot pin, or "".
func (r envRule) refusal(k, v, prog string, known bool) string {
	if r.opts != nil {
		why := r.opts(optionWords(v))
		switch {
		case why == "":
			return ""
		case known:
			return fmt.Sprintf("the server's env sets %s, whose option %s", k, why)
		}
		return fmt.Sprintf("the server's env sets %s (read by %s), whose option %s", k, strings.TrimSuffix(prog, ","), why)
	}
	if v == "" || slices.Contains(r.off, v) {
		return ""
	}
	does := r.does
	if does == "" {
		does = loadsCode
	}
	fix := "remove it from the env"
	if r.unless != "" {
		off := r.unlessOff
		if off == "" {
			off = "1"
		}
		fix += ", or set " + r.unless + "=" + off + " there"
	}
	return fmt.Sprintf("the server's env sets `%s`, which "+does+"; "+fix, k, prog)
}

// turnedOff reports whether v, the value of the rule's unless variable
// in the server's env, turns the rule off: a python flag set on, or with
// unlessOff, any value (unlessOff turns off what the rule is about, and
// any other value is refused by that variable's own rule).
func (r envRule) turnedOff(v string) bool {
	if r.unlessOff != "" {
		return v != ""
	}
	return flagOn(v)
}

// flagOn reports whether python reads flag variable value v as on: set,
// and not an integer that is 0 (" -0" is off, "yes" on).
func flagOn(v string) bool {
	if v == "" {
		return false
	}
	n, err := strconv.ParseInt(strings.TrimLeft(v, " \t\n\v\f\r"), 10, 64)
	return err != nil || n != 0
}

// envValue is the value env gives variable name (in any case on Windows).
func envValue(env map[string]string, name string) string {
	for k, v := range env {
		if envNameMatches(k, name) && v != "" {
			return v
		}
	}
	return ""
}

// matches reports whether the rule is about variable k.
func (r envRule) matches(k string) bool {
	if r.npm {
		setting, ok := npmSetting(k)
		return ok && setting == r.name
	}
	return envNameMatches(k, r.name)
}

// npmSetting is the npm setting variable k sets, as npm reads its
// environment: a name starting with npm_config_ in any case sets the rest,
// lowercased, its underscores but a leading one read as dashes
// (NPM_CONFIG_NODE_OPTIONS sets node-options).
func npmSetting(k string) (string, bool) {
	const prefix = "npm_config_"
	if len(k) <= len(prefix) || !strings.EqualFold(k[:len(prefix)], prefix) {
		return "", false
	}
	s := k[len(prefix):]
	if strings.HasPrefix(s, "//") {
		return s, true // a registry's own setting, read as it is
	}
	return strings.ToLower(s[:1] + strings.ReplaceAll(s[1:], "_", "-")), true
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
