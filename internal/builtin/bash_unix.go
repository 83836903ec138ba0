//go:build unix

package builtin

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/clawde/clawd/internal/tools"
)

// findShell looks the shell up in PATH.
func findShell(name string) (string, error) {
	shell, err := exec.LookPath(name)
	if err != nil {
		return "", tools.Errorf("the bash tool needs %q, which is not installed or not in clawd's PATH (%v); install bash or add it to PATH and restart clawd", name, err)
	}
	return shell, nil
}

// exitStatus is the shell convention: the exit code, or 128+signal for a
// process killed by a signal.
func exitStatus(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}
