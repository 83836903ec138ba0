package builtin

import (
	"errors"
	"strings"
	"testing"
)

// Which bash runs on Windows, given what is in PATH and on disk: a real
// bash in PATH first, then Git Bash, WSL's launcher last, else an error
// naming what to install.
func TestChooseWindowsBash(t *testing.T) {
	env := map[string]string{
		"SystemRoot":        `C:\Windows`,
		"ProgramFiles":      `C:\Program Files`,
		"ProgramW6432":      `C:\Program Files`,
		"ProgramFiles(x86)": `C:\Program Files (x86)`,
		"LOCALAPPDATA":      `C:\Users\ann\AppData\Local`,
	}
	const (
		gitBash     = `C:\Program Files\Git\bin\bash.exe`
		gitBash86   = `C:\Program Files (x86)\Git\bin\bash.exe`
		gitBashUser = `C:\Users\ann\AppData\Local\Programs\Git\bin\bash.exe`
		wsl         = `C:\Windows\System32\bash.exe`
		msys        = `C:\msys64\usr\bin\bash.exe`
	)
	for _, tc := range []struct {
		name     string
		inPath   string
		files    []string
		env      map[string]string
		want     windowsBash
		wantNone bool
	}{
		{name: "msys bash in PATH", inPath: msys, files: []string{gitBash, wsl}, want: windowsBash{msys, "path"}},
		{name: "Git Bash in PATH", inPath: gitBash, files: []string{gitBash}, want: windowsBash{gitBash, "path"}},
		{name: "WSL launcher in PATH, Git Bash installed", inPath: wsl, files: []string{wsl, gitBash}, want: windowsBash{gitBash, "git-bash"}},
		{name: "WSL launcher in PATH, case differs", inPath: `c:\WINDOWS\system32\BASH.EXE`, files: []string{gitBash86}, want: windowsBash{gitBash86, "git-bash"}},
		{name: "WindowsApps alias in PATH", inPath: `C:\Users\ann\AppData\Local\Microsoft\WindowsApps\bash.exe`, files: []string{gitBashUser}, want: windowsBash{gitBashUser, "git-bash"}},
		{name: "nothing in PATH, Git Bash installed", files: []string{gitBash}, want: windowsBash{gitBash, "git-bash"}},
		{name: "nothing in PATH, per-user Git", files: []string{gitBashUser}, want: windowsBash{gitBashUser, "git-bash"}},
		{name: "only WSL, in PATH", inPath: wsl, files: []string{wsl}, want: windowsBash{wsl, "wsl"}},
		{name: "only WSL, not in PATH", files: []string{wsl}, want: windowsBash{wsl, "wsl"}},
		{name: "SystemRoot elsewhere", inPath: `D:\Win\System32\bash.exe`, env: map[string]string{"SystemRoot": `D:\Win`, "ProgramFiles": `D:\PF`}, files: []string{`D:\PF\Git\bin\bash.exe`}, want: windowsBash{`D:\PF\Git\bin\bash.exe`, "git-bash"}},
		{name: "no bash at all", wantNone: true},
		{name: "no environment, no bash", env: map[string]string{}, wantNone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env
			if tc.env != nil {
				e = tc.env
			}
			have := map[string]bool{}
			for _, f := range tc.files {
				have[strings.ToLower(f)] = true
			}
			got, err := chooseWindowsBash(tc.inPath, func(k string) string { return e[k] },
				func(p string) bool { return have[strings.ToLower(p)] })
			if tc.wantNone {
				if !errors.Is(err, errNoWindowsBash) {
					t.Fatalf("got %+v, %v; want errNoWindowsBash", got, err)
				}
				for _, s := range []string{"Git for Windows", "WSL", "PATH"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %s", err, s)
					}
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
