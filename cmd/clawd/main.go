// Command clawd is a local MCP server and gateway for coding agents. This
// package is only the command line; the daemon lives in internal/.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI and returns the process exit code: 0 success,
// 1 runtime failure, 2 usage error.
func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintln(os.Stderr, ex.msg)
		}
		return ex.code
	}
	// Anything cobra itself reports (unknown command or flag, bad args) is
	// a usage error.
	fmt.Fprintf(os.Stderr, "clawd: %v\nRun 'clawd --help' for usage.\n", err)
	return 2
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
		return usageError("%v\nRun '%s --help' for usage.", err, c.CommandPath())
	})
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
		newInstallCmd(), newUninstallCmd(),
	)
	return root
}
