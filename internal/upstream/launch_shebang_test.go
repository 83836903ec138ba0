//go:build unix

package upstream

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// shebangProg writes an executable named name in a directory put first on
// PATH, its first line the #! line given ("" for none: a binary).
func shebangProg(t *testing.T, name, line string) string {
	t.Helper()
	dir := t.TempDir()
	body := "\x7fELF\x02\x01\x01\x00not a script\n"
	if line != "" {
		body = line + "\nexit 0\n"
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return p
}

// The env rules follow the interpreter a #! executable names, whatever
// the command is called: python3 may be pyenv's bash shim, an npm bin is
// a node script, a console_script a python one. What is pinned does not
// change.
func TestEnvRulesFollowTheShebang(t *testing.T) {
	work := envTestSetup(t)
	cases := []struct {
		prog, line string
		c          launchCase
	}{
		// python3 that is a bash script: python's rules, then bash's.
		{"python3", "#!/usr/bin/env bash", launchCase{cmd: []string{"python3", "x.py"}, env: envOf("BASH_ENV", "/tmp/evil.sh"), unpinned: "BASH_ENV"}},
		{"python3", "#!/usr/bin/env bash", launchCase{cmd: []string{"python3", "x.py"}, env: envOf("PYTHONINSPECT", "1"), unpinned: "PYTHONINSPECT"}},
		{"python3", "#!/usr/bin/env bash", launchCase{cmd: []string{"python3", "x.py"}, env: envOf("FOO", "1"), script: "x.py"}},
		{"python3", "#!/bin/bash -e", launchCase{cmd: []string{"python3", "x.py"}, env: envOf("PS4", "$(evil)"), unpinned: "PS4"}},
		// An npm bin: a node script, a plain executable by its name.
		{"mcp-srv", "#!/usr/bin/env node", launchCase{cmd: []string{"mcp-srv", "--stdio"}, env: envOf("NODE_OPTIONS", "--require /tmp/e.js"), unpinned: "NODE_OPTIONS"}},
		{"mcp-srv", "#!/usr/bin/env node", launchCase{cmd: []string{"mcp-srv", "--stdio"}, env: envOf("NODE_OPTIONS", "--max-old-space-size=1")}},
		{"mcp-srv", "#!/usr/bin/env -S node --enable-source-maps", launchCase{cmd: []string{"mcp-srv"}, env: envOf("NODE_OPTIONS", "-r /tmp/e.js"), unpinned: "NODE_OPTIONS"}},
		{"mcp-srv", "#!/usr/local/bin/node", launchCase{cmd: []string{"mcp-srv"}, env: envOf("NODE_OPTIONS", "--import=/tmp/e.mjs"), unpinned: "--import"}},
		// A python console_script, versioned interpreter and all.
		{"mcp-py", "#!/usr/bin/python3.11", launchCase{cmd: []string{"mcp-py"}, env: envOf("PYTHONINSPECT", "1"), unpinned: "PYTHONINSPECT"}},
		{"mcp-py", "#! /usr/bin/env  python3\r", launchCase{cmd: []string{"mcp-py"}, env: envOf("PYTHONINSPECT", "1"), unpinned: "PYTHONINSPECT"}},
		{"mcp-py", "#!/usr/bin/env -u FOO A=1 -Spython3 -u", launchCase{cmd: []string{"mcp-py"}, env: envOf("PYTHONINSPECT", "1"), unpinned: "PYTHONINSPECT"}},
		// sh reads ENV; dash (by its own name) does not.
		{"mytool", "#!/bin/sh", launchCase{cmd: []string{"mytool"}, env: envOf("ENV", "/tmp/evil.sh"), unpinned: "`ENV`"}},
		{"mytool", "#!/bin/dash", launchCase{cmd: []string{"mytool"}, env: envOf("ENV", "/tmp/x.sh")}},
		// A binary, or a #! of a program without rules: only the rules of
		// every program (a runtime's own variables among them), not the
		// broad variables a recognised program reads as code.
		{"mytool", "", launchCase{cmd: []string{"mytool"}, env: envOf("ENV", "/tmp/evil.sh", "HOME", "/tmp/evil", "XDG_CONFIG_HOME", "/tmp/evil")}},
		{"mytool", "", launchCase{cmd: []string{"mytool"}, env: envOf("BASH_ENV", "/tmp/evil.sh"), unpinned: "bash, if mytool starts it"}},
		{"mytool", "#!/usr/bin/awk -f", launchCase{cmd: []string{"mytool"}, env: envOf("ENV", "/tmp/evil.sh")}},
		{"mytool", "#!", launchCase{cmd: []string{"mytool"}, env: envOf("ENV", "/tmp/evil.sh")}},
	}
	for _, tc := range cases {
		shebangProg(t, tc.prog, tc.line)
		checkLaunchCases(t, work, []launchCase{tc.c})
	}
}

// An npm bin run by a node that is itself a bash shim: both
// interpreters' rules.
func TestEnvRulesFollowNestedShebangs(t *testing.T) {
	work := envTestSetup(t)
	shebangProg(t, "node", "#!/usr/bin/env bash")
	shebangProg(t, "mcp-srv", "#!/usr/bin/env node")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"mcp-srv"}, env: envOf("BASH_ENV", "/tmp/evil.sh"), unpinned: "BASH_ENV"},
		{cmd: []string{"mcp-srv"}, env: envOf("NODE_OPTIONS", "-r /tmp/e.js"), unpinned: "NODE_OPTIONS"},
	})
}

// Only the first 256 bytes are read, as the kernel reads them: a word past
// them is not the interpreter.
func TestShebangReadIsBounded(t *testing.T) {
	p := shebangProg(t, "mytool", "#!/usr/bin/env "+strings.Repeat("x", 300)+" bash")
	if got := shebangInterpreters(p); slices.Contains(got, "bash") {
		t.Errorf("interpreters %q; want none from past 256 bytes", got)
	}
}

// A FIFO in place of the executable is not waited on.
func TestShebangReadDoesNotBlockOnAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	if got := shebangInterpreters(p); len(got) != 0 {
		t.Errorf("interpreters %q from a FIFO", got)
	}
}

// Runtimes named with their version (Debian's ruby3.1, php8.2, perl5.36.0,
// nvm-less node22 links) take their runtime's rules.
func TestVersionedRuntimeNames(t *testing.T) {
	for name, want := range map[string]string{
		"ruby3.1": "ruby", "php8.2": "php", "perl5.36.0": "perl", "node22": "node", "nodejs18": "node",
		"python3.11": "python", "pypy3": "python", "lua5.4": "lua", "luajit2.1": "lua",
		"luajit-2.1.0-beta3": "lua", "lua-5.1": "lua", "lua-language-server": "", "luarocks": "",
		"ruby": "ruby", "node": "node", "rubyx": "", "phpunit": "", "node-gyp": "", "perldoc": "",
		"zsh-5.9": "shell", "bash5.2": "shell", "java17": "java", "java-21": "java", "bashdb": "", "javac": "",
	} {
		if got := launcherKind(name); got != want {
			t.Errorf("launcherKind(%q) = %q; want %q", name, got, want)
		}
	}
	work := envTestSetup(t, "ruby3.1", "php8.2", "node22", "perl5.36.0", "zsh-5.9", "java17", "fish3.7", "bash5.2")
	checkLaunchCases(t, work, []launchCase{
		{cmd: []string{"ruby3.1", "-r/tmp/evil", "x.rb"}, unpinned: "-r"},
		{cmd: []string{"ruby3.1", "x.rb"}, script: "x.rb"},
		{cmd: []string{"php8.2", "-d", "auto_prepend_file=/tmp/e.php", "x.php"}, unpinned: "-d"},
		{cmd: []string{"php8.2", "x.php"}, script: "x.php"},
		{cmd: []string{"node22", "-r", "/tmp/e.js", "x.js"}, unpinned: "`-r`"},
		{cmd: []string{"node22", "x.js"}, env: envOf("NODE_OPTIONS", "--require /tmp/e.js"), unpinned: "NODE_OPTIONS"},
		{cmd: []string{"perl5.36.0", "-MEvil", "x.pl"}, unpinned: "-MEvil"},
		{cmd: []string{"perl5.36.0", "x.pl"}, script: "x.pl"},
		{cmd: []string{"zsh-5.9", "x.sh"}, script: "x.sh"},
		// A versioned shell's options are read with its plain name's
		// table: fish's -f takes a value (POSIX sh's -f does not), so
		// fish runs x.fish here, not x.sh; bash's --norc is bash's.
		{cmd: []string{"fish3.7", "-f", "x.sh", "x.fish"}, script: "x.fish"},
		{cmd: []string{"bash5.2", "--norc", "x.sh"}, script: "x.sh"},
		// And its env with its plain name's rules: fish's config files.
		{cmd: []string{"fish3.7", "x.fish"}, env: envOf("XDG_CONFIG_HOME", "/tmp/evil"), unpinned: "XDG_CONFIG_HOME"},
		{cmd: []string{"zsh-5.9", "x.sh"}, env: envOf("ZDOTDIR", "/tmp/evil"), unpinned: "ZDOTDIR"},
		{cmd: []string{"java17", "-javaagent:/tmp/a.jar", "-jar", "x.jar"}, unpinned: "-javaagent"},
	})
}
