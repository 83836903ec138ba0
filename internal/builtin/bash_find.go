package builtin

import (
	"errors"
	"strings"
)

// Which bash the tool runs on Windows (docs/platforms.md). Windows ships no
// bash of its own; two are common:
//
//   - Git Bash (Git for Windows' MSYS2 bash): runs in Windows' own file
//     system and environment, so the workspace path, working_dir and the
//     job object that bounds the call all apply to it directly.
//   - WSL's launcher, %SystemRoot%\System32\bash.exe: runs the command in a
//     Linux distribution (the workspace is seen under /mnt/<drive>), and the
//     Linux processes it starts live in the WSL VM, beyond the job object:
//     a timeout or cancel ends the launcher, not necessarily what it ran.
//
// So a bash found in PATH is used unless it is the WSL launcher; then Git
// Bash at its usual install places; the WSL launcher only when nothing else
// exists; otherwise an error that says what to install.

// windowsBash is the outcome of chooseWindowsBash.
type windowsBash struct {
	Path string
	Kind string // "path", "git-bash" or "wsl"
}

// errNoWindowsBash is the error when no bash exists: it names what to install.
var errNoWindowsBash = errors.New(`the bash tool needs bash, and none was found: install Git for Windows (Git Bash, usually C:\Program Files\Git\bin\bash.exe) or WSL, or put a bash.exe in clawd's PATH, and restart clawd`)

// chooseWindowsBash decides which bash to run, given the result of looking
// "bash" up in PATH (empty if not found), an environment lookup and a test
// for a file's existence. It is pure so that the decision is tested on any
// OS; paths are Windows paths and compared ignoring case.
func chooseWindowsBash(inPath string, getenv func(string) string, exists func(string) bool) (windowsBash, error) {
	sysRoot := getenv("SystemRoot")
	if sysRoot == "" {
		sysRoot = `C:\Windows`
	}
	isWSL := func(p string) bool {
		lp := strings.ToLower(p)
		return strings.HasPrefix(lp, strings.ToLower(winJoin(sysRoot, `System32`))+`\`) ||
			strings.HasPrefix(lp, strings.ToLower(winJoin(sysRoot, `Sysnative`))+`\`) ||
			strings.Contains(lp, `\microsoft\windowsapps\`)
	}
	if inPath != "" && !isWSL(inPath) {
		return windowsBash{Path: inPath, Kind: "path"}, nil
	}
	for _, env := range []string{"ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"} {
		if base := getenv(env); base != "" {
			if p := winJoin(base, `Git\bin\bash.exe`); exists(p) {
				return windowsBash{Path: p, Kind: "git-bash"}, nil
			}
		}
	}
	if base := getenv("LOCALAPPDATA"); base != "" {
		if p := winJoin(base, `Programs\Git\bin\bash.exe`); exists(p) {
			return windowsBash{Path: p, Kind: "git-bash"}, nil
		}
	}
	if inPath != "" {
		return windowsBash{Path: inPath, Kind: "wsl"}, nil
	}
	if p := winJoin(sysRoot, `System32\bash.exe`); exists(p) {
		return windowsBash{Path: p, Kind: "wsl"}, nil
	}
	return windowsBash{}, errNoWindowsBash
}

// winJoin joins two parts of a Windows path with one backslash.
func winJoin(a, b string) string {
	return strings.TrimRight(a, `\/`) + `\` + strings.TrimLeft(b, `\/`)
}
