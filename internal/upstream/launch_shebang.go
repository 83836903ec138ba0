package upstream

// The #! line of a command's executable: the env rules of the interpreter
// it names apply to the server too (a version manager's shim named python3
// is a bash script), whatever the command's own name.

import (
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// shebangMax is how much of an executable is read for its #! line: what
// Linux reads of it.
const shebangMax = 256

// shebangDepth bounds the interpreters followed through their own #!
// lines (an npm bin run by a node that is a version manager's shim).
const shebangDepth = 4

// shebangPrograms are the interpreters named by exe's #! line (or its
// interpreter's, and so on: interps, shebangInterpreters(exe)) that clawd
// recognises, whose env rules apply
// to the server too. Only the env rules follow the #! line; what is
// pinned does not.
func shebangPrograms(exe string, interps []string) []envProgram {
	var progs []envProgram
	for _, n := range interps {
		if kind := launcherKind(n); kind != "" {
			progs = append(progs, envProgram{kind, n + " (the #! interpreter of " + exe + ")", []string{n}})
		}
	}
	return progs
}

// shebangRefusal is why exe, a plain executable, runs what clawd cannot
// pin through its #! line (interps, shebangInterpreters(exe)), or "": an interpreter that fetches
// (`#!/usr/bin/env -S npx -y pkg`, `uv run --script`), builds (`make -f`)
// or starts another command (`nice`, `sudo`) runs more than the script
// clawd pins, as it would named as the command. An interpreter that runs
// the script itself (awk -f, tsx, julia) runs what is pinned.
func shebangRefusal(exe string, interps []string) string {
	for _, n := range interps {
		switch kind := launcherKind(n); kind {
		case "npx", "fetcher", "wrapper", "builder":
			why := kindRefusal(kind, n)
			if kind == "npx" {
				why = "npx fetches and runs a package that clawd would not pin from its #! line; give `npx -y NAME@VERSION` as the command, which clawd pins"
			}
			return exe + " runs through " + n + " (its #! line): " + why
		}
	}
	return ""
}

// shebangInterpreters are the program names of the interpreters exe runs
// through: its #! line's, then that interpreter's own if it is a script,
// by their names and their real files' names. An interpreter named
// without a path (`#!/usr/bin/env node`) is looked up on clawd's PATH.
func shebangInterpreters(exe string) []string {
	var names []string
	path := exe
	for i := 0; i < shebangDepth && path != ""; i++ {
		interp := readShebang(path)
		if interp == "" {
			break
		}
		if n := progName(interp); !slices.Contains(names, n) {
			names = append(names, n)
		}
		path = ""
		if filepath.IsAbs(interp) {
			path = interp
		} else if p, err := exec.LookPath(interp); err == nil {
			path = p
		}
		if path == "" {
			break
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
			if n := progName(real); !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// readShebang is the interpreter path's #! line names (through env, the
// program env runs), or "": at most shebangMax bytes of a regular file
// are read, through a descriptor that does not wait on a FIFO.
func readShebang(path string) string {
	f, err := fileutil.OpenNoWait(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	buf := make([]byte, shebangMax)
	n, _ := io.ReadFull(f, buf)
	line, ok := strings.CutPrefix(string(buf[:n]), "#!")
	if !ok {
		return ""
	}
	line, _, _ = strings.Cut(line, "\n")
	words := strings.Fields(line)
	if len(words) == 0 {
		return ""
	}
	if progName(words[0]) != "env" {
		return words[0]
	}
	return envCommand(words[1:])
}

// envCommand is the program env runs given words (its options split as
// -S splits them), or "".
func envCommand(words []string) string {
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			if i+1 < len(words) {
				return words[i+1]
			}
			return ""
		case w == "-u" || w == "-C" || w == "-P" || w == "--unset" || w == "--chdir":
			i++ // its value is the next word
		case strings.HasPrefix(w, "-S") && len(w) > 2:
			words[i] = w[2:] // -SPROGRAM
			i--
		case strings.HasPrefix(w, "-"), strings.Contains(w, "="):
			// An option (-S, -i, -u NAME...) or NAME=VALUE.
		default:
			return w
		}
	}
	return ""
}
