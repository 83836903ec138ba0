// Command clawd is a local MCP server and gateway for coding agents. This
// package is only the command line; the daemon lives in internal/.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI and returns the process exit code: 0 success,
// 1 runtime failure, 2 usage error.
func run(args []string) int {
	return runWith(args, os.Stdout, os.Stderr)
}

// runWith is run with the output streams given. A command whose output
// could not be written (a full disk, a closed pipe's EIO) fails with exit
// 1, even when it did not look at what its writes returned: a script
// must not take a lost list for an empty one.
func runWith(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	out := &checkedWriter{w: stdout}
	root.SetOut(out)
	root.SetErr(stderr)
	err := root.ExecuteContext(context.WithValue(context.Background(), cmdLineKey{}, args))
	if werr := out.firstErr(); err == nil && werr != nil {
		err = runtimeError("writing the output: %v", werr)
	}
	return reportError(stderr, err)
}

// cmdLineKey is the context key under which runWith gives the commands
// its arguments: what a message may need to know of the whole command
// line, which cobra does not keep for a command whose flags failed.
type cmdLineKey struct{}

// cmdLine is the command line c runs for (without the program's name), nil
// when it was not run through runWith.
func cmdLine(c *cobra.Command) []string {
	args, _ := c.Context().Value(cmdLineKey{}).([]string)
	return args
}

// checkedWriter remembers the first error a write to w returned. Safe for
// concurrent use (a command may print from several goroutines).
type checkedWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return n, err
}

// firstErr is the first write error, if any.
func (c *checkedWriter) firstErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// reportError prints err on w and returns the exit code it stands for.
// The message goes through terminalSafe: errors carry text clawd does not
// choose (an upstream's error or a daemon's answer naming one, a path, a
// name given on the command line), and none of it may drive the terminal.
func reportError(w io.Writer, err error) int {
	if err == nil {
		return 0
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintln(w, terminalSafe(capLines(ex.msg)))
		}
		return ex.code
	}
	// Anything cobra itself reports (unknown command or flag, bad args) is
	// a usage error.
	fmt.Fprintf(w, "clawd: %s\nRun 'clawd --help' for usage.\n", terminalSafe(capLines(err.Error())))
	return 2
}

// maxErrorLine bounds one line of an error message in bytes. Messages quote
// the value that was wrong, and a value can be as long as the command line
// allows (128 KiB on Linux): a page of it helps nobody.
const maxErrorLine = 1024

// capLines cuts the middle out of each line longer than maxErrorLine, so
// the start (what was wrong) and the end (what to do) both stay.
func capLines(msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		if len(l) <= maxErrorLine {
			continue
		}
		head, tail := maxErrorLine/2, len(l)-maxErrorLine/4
		for head > 0 && !utf8.RuneStart(l[head]) {
			head--
		}
		for tail < len(l) && !utf8.RuneStart(l[tail]) {
			tail++
		}
		lines[i] = fmt.Sprintf("%s ...(%d bytes cut)... %s", l[:head], tail-head, l[tail:])
	}
	return strings.Join(lines, "\n")
}

// exitError carries an exit code and the message to print on stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageError reports bad command-line input (exit 2).
func usageError(format string, a ...any) error {
	return &exitError{code: 2, msg: "clawd: " + fmt.Sprintf(format, a...)}
}

// runtimeError reports a failure while doing what was asked (exit 1).
func runtimeError(format string, a ...any) error {
	return &exitError{code: 1, msg: "clawd: " + fmt.Sprintf(format, a...)}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "clawd",
		Short:         "A local MCP server and gateway for coding agents",
		Long:          "clawd gives MCP clients (Claude Code, OpenCode, Cursor, scripts) sandboxed tools on one workspace:\nbash, read_file, write_file, list_dir and search. It listens on nothing but stdio, a unix socket\nor loopback.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%s\nRun '%s --help' for usage.", flagProblem(c, err), c.CommandPath())
	})
	root.Version = versionString()
	root.SetVersionTemplate("clawd {{.Version}}\n")
	root.AddCommand(
		newServeCmd(),
		newInitCmd(),
		newVersionCmd(),
		newConnectCmd(),
		newToolsCmd(),
		newCallCmd(),
		newHealthCmd(),
		newTokenCmd(),
		newTrustCmd(),
		newAuditCmd(),
		newMCPCmd(),
		newEgressCmd(),
		newInstallCmd(), newUninstallCmd(),
		newDoctorCmd(),
	)
	// cobra's completion command shows its help for a missing or unknown
	// shell and exits 0; make it a usage error like every other group.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = needSubcommand
		}
	}
	runtimeErrors(root)
	return root
}

// runtimeErrors makes an error that c or a subcommand returns while
// running, and that is not already an exitError (a write to a closed or
// full stdout, a library's error), a runtime failure (exit 1). What is
// left for reportError's usage-error default is cobra's own complaints
// about the command line, which come before RunE.
func runtimeErrors(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			var ex *exitError
			if err != nil && !errors.As(err, &ex) {
				return runtimeError("%v", err)
			}
			return err
		}
	}
	// cobra.NoArgs calls any argument an "unknown command". On a command
	// without subcommands (clawd version extra) that points nowhere; on a
	// group (clawd token bogus) it is right, but the help that lists the
	// group's subcommands is the group's own, not clawd --help.
	if args := c.Args; args != nil && (!c.HasSubCommands() || c.HasParent()) {
		group := c.HasSubCommands()
		c.Args = func(cmd *cobra.Command, a []string) error {
			err := args(cmd, a)
			if err == nil || len(a) == 0 || !strings.HasPrefix(err.Error(), "unknown command ") {
				return err
			}
			path := cmd.CommandPath()
			if group {
				return usageError("unknown command %q for %q\nRun '%s --help' for usage.", a[0], path, path)
			}
			return usageError("unexpected argument %q: %s takes no arguments\nRun '%s --help' for usage.", a[0], path, path)
		}
	}
	for _, sub := range c.Commands() {
		runtimeErrors(sub)
	}
}

// badFlagValue matches pflag's message for a value that does not parse,
// e.g. `invalid argument "abc" for "--port" flag: strconv.ParseInt: ...`.
var badFlagValue = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?--([\w-]+)" flag: (?:strconv\.Parse(\w+): )?(.*)$`)

// flagProblem rewrites pflag's parse errors into one sentence that names the
// flag, the value and what the flag takes, instead of Go's strconv text.
func flagProblem(c *cobra.Command, err error) string {
	m := badFlagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	value, name, parser, detail := m[1], m[2], m[3], m[4]
	want := "a valid value"
	switch parser {
	case "Int", "Uint":
		want = "a whole number"
		if strings.Contains(detail, "out of range") {
			want = "a smaller whole number"
		}
	case "Float":
		want = "a number"
	case "Bool":
		want = "true or false"
	}
	fl := c.Flags().Lookup(name)
	if fl != nil {
		if _, ok := fl.Value.(portFlag); ok && parser == "" {
			want = "a port, 0..65535"
		}
	}
	msg := fmt.Sprintf("--%s %q: expected %s", name, value, want)
	if fl != nil && fl.Usage != "" {
		msg += " (--" + name + ": " + fl.Usage + ")"
	}
	return msg
}

// exactArgs is cobra.ExactArgs with a message that says what is missing
// and shows the usage, instead of "accepts 1 arg(s), received 0".
func exactArgs(n int, what, usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < n:
			return usageError("%s needs %s\nusage: %s", cmd.CommandPath(), what, usage)
		case len(args) > n:
			return usageError("unexpected argument %q: %s takes only %s\nusage: %s", args[n], cmd.CommandPath(), what, usage)
		}
		return nil
	}
}
