//go:build linux

package runstate

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// A state file's pid that now belongs to another user's process is not a
// live daemon of ours: that user could have forked until the dead daemon's
// pid was theirs, then answered /health on its port with it.
func TestAliveOnlyForOurProcesses(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("Alive(our own pid) = false")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a process as another user")
	}
	cmd := exec.Command("sleep", "10")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := cmd.Start(); err != nil {
		t.Skipf("starting sleep as nobody: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if Alive(cmd.Process.Pid) {
		t.Errorf("Alive(pid %d of uid 65534) = true, want false", cmd.Process.Pid)
	}
}
