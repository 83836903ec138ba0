package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestUnknownShellIsUsageError: `clawd completion` with no shell or one it
// does not know is a usage error (exit 2), like every other command group,
// not a help page with exit 0; a known shell still prints its script.
func TestUnknownShellIsUsageError(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}} {
		root := newRootCmd()
		root.SetArgs(args)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		if code := reportError(io.Discard, root.Execute()); code != 2 {
			t.Errorf("clawd %v: exit %d, want 2", args, code)
		}
	}
	root := newRootCmd()
	root.SetArgs([]string{"completion", "bash"})
	root.SetOut(io.Discard)
	if code := reportError(io.Discard, root.Execute()); code != 0 {
		t.Errorf("clawd completion bash: exit %d", code)
	}
}

// TestRuntimeErrorIsNotUsageError: an error a command meets while running
// (here: its output cannot be written) is a runtime failure, exit 1, not
// a usage error with exit 2 and "Run 'clawd --help' for usage".
func TestRuntimeErrorIsNotUsageError(t *testing.T) {
	// cobra's completion command writes to the stdout of the time the
	// command was made: a descriptor open only for reading fails there.
	ro, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	stdout := os.Stdout
	os.Stdout = ro
	root := newRootCmd()
	os.Stdout = stdout
	root.SetArgs([]string{"completion", "bash"})
	var msg strings.Builder
	if code := reportError(&msg, root.Execute()); code != 1 || strings.Contains(msg.String(), "--help") {
		t.Fatalf("exit %d: %s", code, msg.String())
	}
	// cobra's own complaints stay usage errors.
	root = newRootCmd()
	root.SetArgs([]string{"nosuchcommand"})
	if code := reportError(io.Discard, root.Execute()); code != 2 {
		t.Fatalf("unknown command: exit %d", code)
	}
}

// TestExtraArgumentToLeafCommand: an argument a command does not take is
// named as such, with the command's help to run, not called an "unknown
// command" of a command that has none; a group still says which of its
// subcommands exist, all of them.
func TestExtraArgumentToLeafCommand(t *testing.T) {
	for _, args := range [][]string{
		{"version", "extra"},
		{"init", "extra"},
		{"tools", "extra"},
		{"health", "extra"},
		{"connect", "extra"},
		{"token", "show", "extra"},
		{"token", "list", "extra"},
		{"completion", "bash", "extra"},
	} {
		root := newRootCmd()
		root.SetArgs(args)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		var msg strings.Builder
		path := "clawd " + strings.Join(args[:len(args)-1], " ")
		if code := reportError(&msg, root.Execute()); code != 2 || !strings.Contains(msg.String(), `unexpected argument "extra"`) ||
			!strings.Contains(msg.String(), "'"+path+" --help'") {
			t.Errorf("clawd %v: exit %d: %s", args, code, msg.String())
		}
	}
	for _, args := range [][]string{{"token"}, {"trust", "nosuch"}} {
		root := newRootCmd()
		root.SetArgs(args)
		var msg strings.Builder
		code := reportError(&msg, root.Execute())
		if args[0] == "token" && (code != 2 || !strings.Contains(msg.String(), "header")) {
			t.Errorf("clawd token: exit %d: %s", code, msg.String())
		}
		if args[0] == "trust" && (code != 2 || !strings.Contains(msg.String(), "nosuch")) {
			t.Errorf("clawd trust nosuch: exit %d: %s", code, msg.String())
		}
	}
}

// TestUnknownSubcommandPointsAtItsGroup: an unknown subcommand of any
// command group is a usage error that points at that group's help, where
// its subcommands are listed, not at clawd --help.
func TestUnknownSubcommandPointsAtItsGroup(t *testing.T) {
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() {
			groups = append(groups, path)
		}
		for _, sub := range c.Commands() {
			if sub.Name() != "help" {
				walk(sub, append(append([]string(nil), path...), sub.Name()))
			}
		}
	}
	walk(newRootCmd(), nil)
	if len(groups) < 4 {
		t.Fatalf("found only the groups %v", groups)
	}
	for _, path := range groups {
		root := newRootCmd()
		root.SetArgs(append(append([]string(nil), path...), "bogus"))
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		var msg strings.Builder
		// A group that takes no arguments points at its help; one that
		// runs on its own (clawd audit) shows its usage line.
		cmdPath := strings.TrimSpace("clawd " + strings.Join(path, " "))
		want := "Run '" + cmdPath + " --help' for usage."
		code := reportError(&msg, root.Execute())
		if !strings.Contains(msg.String(), want) && !strings.Contains(msg.String(), "usage: "+cmdPath+" ") {
			t.Errorf("clawd %s bogus: no pointer to its own help or usage:\n%s", strings.Join(path, " "), msg.String())
		}
		if code != 2 || !strings.Contains(msg.String(), `"bogus"`) || (len(path) > 0 && strings.Contains(msg.String(), "'clawd --help'")) {
			t.Errorf("clawd %s bogus: exit %d, want 2 and %q:\n%s", strings.Join(path, " "), code, want, msg.String())
		}
	}
}

// TestEmptyRequiredArgumentIsUsageError: an empty ID where one is
// required is a malformed command line (exit 2), not a lookup that finds
// nothing (exit 1).
func TestEmptyRequiredArgumentIsUsageError(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, args := range [][]string{{"token", "revoke", ""}} {
		var stderr strings.Builder
		if code := runWith(args, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: clawd token revoke ID") {
			t.Errorf("clawd %q: exit %d, want 2 with the usage:\n%s", args, code, stderr.String())
		}
	}
}
