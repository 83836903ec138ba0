package builtin

import (
	"os"
	"os/exec"

	"github.com/clawde/clawd/internal/tools"
)

// findShell picks the bash to run (chooseWindowsBash: a bash in PATH, else
// Git Bash, else WSL's launcher) or says what to install. A name other than
// "bash" (tests) is looked up in PATH only.
func findShell(name string) (string, error) {
	inPath, lookErr := exec.LookPath(name)
	if name != "bash" {
		if lookErr != nil {
			return "", tools.Errorf("the bash tool needs %q, which is not in clawd's PATH (%v)", name, lookErr)
		}
		return inPath, nil
	}
	exists := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	b, err := chooseWindowsBash(inPath, os.Getenv, exists)
	if err != nil {
		return "", tools.Errorf("%v", err)
	}
	return b.Path, nil
}

func exitStatus(st *os.ProcessState) int { return st.ExitCode() }
